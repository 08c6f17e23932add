import { connect, type NatsConnection } from "@nats-io/transport-node";
import { type BusLogger, errorMessage, silentBusLogger } from "./logger.js";

/** Where NATS is and how to log in. */
export interface NatsSettings {
  url: string;
  user?: string | undefined;
  password?: string | undefined;
  token?: string | undefined;
}

/** The NATS fields of `ServiceConfig` (@moniro/config), accepted as they are. */
export interface NatsConfigFields {
  MONIRO_NATS_URL: string;
  MONIRO_NATS_USER?: string | undefined;
  MONIRO_NATS_PASSWORD?: string | undefined;
  MONIRO_NATS_TOKEN?: string | undefined;
}

export interface ConnectOptions {
  /** Connection name shown by the NATS server (`agent-runner:<host>`). */
  name: string;
  logger?: BusLogger;
  /** Aborting stops the retries (SIGTERM during startup); the promise rejects with the reason. */
  signal?: AbortSignal;
}

/** Initial-connect backoff: 250 ms doubling to 5 s. */
export function connectDelay(attempt: number): number {
  return Math.min(250 * 2 ** Math.max(0, attempt - 1), 5_000);
}

export function natsSettingsOf(settings: NatsSettings | NatsConfigFields): NatsSettings {
  if ("url" in settings) return settings;
  return {
    url: settings.MONIRO_NATS_URL,
    user: settings.MONIRO_NATS_USER,
    password: settings.MONIRO_NATS_PASSWORD,
    token: settings.MONIRO_NATS_TOKEN,
  };
}

/**
 * Connects to NATS, retrying with backoff (and logging which server is
 * unreachable) until it answers or `signal` aborts; once connected, nats.js
 * reconnects forever by itself and disconnects/reconnects are logged.
 */
export async function connectNats(
  settings: NatsSettings | NatsConfigFields,
  options: ConnectOptions,
): Promise<NatsConnection> {
  const { url, user, password, token } = natsSettingsOf(settings);
  const logger = options.logger ?? silentBusLogger;
  const { signal } = options;
  for (let attempt = 1; ; attempt++) {
    if (signal?.aborted) throw signal.reason;
    try {
      const nc = await connect({
        servers: url,
        name: options.name,
        maxReconnectAttempts: -1,
        reconnectTimeWait: 1_000,
        // Otherwise nats.js builds an Error (a stack capture) for every request and
        // JetStream publish, in case it fails: a tenth of the gateway's CPU per DM.
        // Failures still arrive as typed errors, only without the caller's stack.
        noAsyncTraces: true,
        ...(user ? { user, pass: password ?? "" } : {}),
        ...(token ? { token } : {}),
      });
      logger.info(
        { nats: url, attempt },
        attempt === 1 ? "NATS connected" : `NATS connected after ${attempt} attempts`,
      );
      void (async () => {
        for await (const status of nc.status()) {
          if (status.type === "disconnect") logger.warn({ nats: url }, "NATS disconnected; reconnecting");
          if (status.type === "reconnect") logger.info({ nats: url }, "NATS reconnected");
        }
      })();
      return nc;
    } catch (error) {
      if (signal?.aborted) throw signal.reason;
      const delay = connectDelay(attempt);
      if (attempt === 1 || attempt % 10 === 0) {
        logger.warn(
          { nats: url, attempt, retryInMs: delay, err: errorMessage(error) },
          `NATS unreachable at ${url}; retrying`,
        );
      }
      await sleep(delay, signal);
    }
  }
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    }
    signal?.addEventListener("abort", done, { once: true });
  });
}
