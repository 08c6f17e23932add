import { redactUrlCredentials } from "@moniro/envelopes";
import { AuthorizationError, connect, type NatsConnection } from "@nats-io/transport-node";
import { type BusLogger, errorMessage, silentBusLogger } from "./logger.js";
import {
  loginDescription,
  type NatsConfigFields,
  type NatsSettings,
  natsConnectionOptions,
  natsSettingsOf,
} from "./nats-settings.js";

/** The server refused the credentials: retrying cannot help, the configuration (or the server's users) must change. */
export class NatsAuthenticationError extends Error {
  override readonly name = "NatsAuthenticationError";
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

/**
 * Connects to NATS, retrying with backoff (and logging which server is
 * unreachable, its credentials redacted) until it answers or `signal` aborts;
 * once connected, nats.js reconnects forever by itself and
 * disconnects/reconnects are logged. A setting that cannot work (an unreadable
 * file) rejects at once with a NatsConfigError, credentials the server refuses
 * with a NatsAuthenticationError: neither gets better by waiting.
 */
export async function connectNats(
  settings: NatsSettings | NatsConfigFields,
  options: ConnectOptions,
): Promise<NatsConnection> {
  const resolved = natsSettingsOf(settings);
  const where = redactUrlCredentials(resolved.url);
  const connection = natsConnectionOptions(resolved);
  const logger = options.logger ?? silentBusLogger;
  const { signal } = options;
  for (let attempt = 1; ; attempt++) {
    if (signal?.aborted) throw signal.reason;
    try {
      const nc = await connect({
        ...connection,
        name: options.name,
        maxReconnectAttempts: -1,
        reconnectTimeWait: 1_000,
        // A server that drops the TLS handshake (no client certificate) otherwise holds each attempt 20 s.
        timeout: 5_000,
        // Otherwise nats.js builds an Error (a stack capture) for every request and
        // JetStream publish, in case it fails: a tenth of the gateway's CPU per DM.
        // Failures still arrive as typed errors, only without the caller's stack.
        noAsyncTraces: true,
      });
      logger.info(
        { nats: where, attempt },
        attempt === 1 ? "NATS connected" : `NATS connected after ${attempt} attempts`,
      );
      void (async () => {
        for await (const status of nc.status()) {
          if (status.type === "disconnect") logger.warn({ nats: where }, "NATS disconnected; reconnecting");
          if (status.type === "reconnect") logger.info({ nats: where }, "NATS reconnected");
          // A permission violation arrives here, not at the publish that caused it.
          if (status.type === "error") logger.error({ nats: where, err: errorMessage(status.error) }, "NATS error");
        }
      })();
      return nc;
    } catch (error) {
      if (signal?.aborted) throw signal.reason;
      if (isAuthenticationFailure(error)) {
        const message = `NATS at ${where} refused ${loginDescription(resolved)} (${errorMessage(error)}); fix the credentials or the server's users`;
        logger.error({ nats: where, err: errorMessage(error) }, message);
        throw new NatsAuthenticationError(message, { cause: error });
      }
      const delay = connectDelay(attempt);
      if (attempt === 1 || attempt % 10 === 0) {
        logger.warn(
          { nats: where, attempt, retryInMs: delay, err: errorMessage(error) },
          `NATS unreachable at ${where}; retrying`,
        );
      }
      await sleep(delay, signal);
    }
  }
}

function isAuthenticationFailure(error: unknown): boolean {
  if (error instanceof AuthorizationError) return true;
  const message = errorMessage(error);
  return /authorization violation|authentication (expired|revoked)|user authentication/i.test(message);
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
