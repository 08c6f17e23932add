import type { NatsConnection } from "@nats-io/transport-node";
import { type BusLogger, errorMessage, silentBusLogger } from "./logger.js";

/**
 * Drains a connection: subscriptions stop taking messages, the ones in hand
 * finish, pending publishes flush, then it closes. Safe to call twice and on
 * a closed connection.
 */
export async function drainNats(nc: NatsConnection | undefined, logger: BusLogger = silentBusLogger): Promise<void> {
  if (!nc || nc.isClosed() || nc.isDraining()) return;
  try {
    await nc.drain();
  } catch (error) {
    logger.warn({ err: errorMessage(error) }, "NATS drain failed; closing");
    await nc.close().catch(() => {});
  }
}

/**
 * Runs `stop` once on SIGTERM or SIGINT (whichever comes first), then exits
 * 0, or 1 when `stop` throws or takes longer than `timeoutMs`. `stop` should
 * stop consuming, finish in-flight work and drain the connection (`drainNats`).
 */
export function onShutdown(
  stop: (signal: string) => Promise<void>,
  options: { logger?: BusLogger; timeoutMs?: number; exit?: (code: number) => void } = {},
): void {
  const logger = options.logger ?? silentBusLogger;
  const exit = options.exit ?? ((code: number) => process.exit(code));
  let stopping = false;
  const run = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, "shutting down");
    const timeoutMs = options.timeoutMs ?? 20_000;
    const force = setTimeout(() => {
      logger.error({ signal, timeoutMs }, `shutdown took longer than ${timeoutMs} ms; exiting`);
      exit(1);
    }, timeoutMs);
    force.unref();
    stop(signal).then(
      () => {
        clearTimeout(force);
        logger.info({}, "stopped");
        exit(0);
      },
      (error: unknown) => {
        clearTimeout(force);
        logger.error({ err: errorMessage(error) }, "error during shutdown");
        exit(1);
      },
    );
  };
  process.once("SIGTERM", () => run("SIGTERM"));
  process.once("SIGINT", () => run("SIGINT"));
}
