import { createServer } from "node:http";
import { jetstream } from "@nats-io/jetstream";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { context, trace } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { pino } from "pino";
import { z } from "zod";

/**
 * What every Moniro service loads and uses before its own code: an HTTP
 * server (health and metrics), a NATS connection with a JetStream client and
 * a subscription, a zod schema, a pino logger, the OpenTelemetry API with
 * its async context. Each used once, as a service's start uses them.
 */
export async function sharedStack(
  service: string,
): Promise<{ nc: NatsConnection; ready(detail?: Record<string, unknown>): void }> {
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  const log = pino({ name: service });
  const nc = await connect({ servers: process.env.NATS_URL ?? "127.0.0.1:4222" });
  jetstream(nc);
  const subscription = nc.subscribe(`${process.env.FLOOR_SUBJECT ?? "rss-floor"}.${process.pid}.>`);
  void (async () => {
    for await (const message of subscription) message.respond(message.data);
  })();
  const envelope = z.object({
    v: z.literal(1),
    id: z.string().min(1),
    agent: z.string().regex(/^[a-z0-9-]+$/),
    text: z.string().max(100_000),
  });
  envelope.parse({ v: 1, id: "01JFLOOR", agent: "floor", text: "hello" });
  trace.getTracer(service).startActiveSpan("start", (span) => span.end());
  const server = createServer((_request, response) => response.end("ok"));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    nc,
    ready(detail = {}) {
      log.info({ service, ...detail }, "ready");
      process.stdout.write("rss-floor ready\n");
    },
  };
}

/** Stops on SIGTERM after `cleanup` (what the program made in Redis or NATS). */
export function stopOnSigterm(cleanup: () => Promise<void>): void {
  process.once("SIGTERM", () => {
    cleanup().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  });
}
