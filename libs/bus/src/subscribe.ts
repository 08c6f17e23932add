import type { DecodeError, Subjects } from "@moniro/envelopes";
import { decode } from "@moniro/envelopes";
import { ensureContextManager } from "@moniro/telemetry";
import { type JetStreamClient, jetstream } from "@nats-io/jetstream";
import type { Msg, NatsConnection, Subscription } from "@nats-io/transport-node";
import type { z } from "zod";
import { dlqRecord, dlqSubjectFor, publishDlq } from "./dlq.js";
import { startKeepalive } from "./keepalive.js";
import { type BusLogger, errorMessage, silentBusLogger } from "./logger.js";
import { inMessageSpan } from "./message-span.js";
import { respondJson } from "./respond.js";
import { traceHeadersIfAny } from "./trace-headers.js";

export interface SubscribeOptions<S extends z.ZodType> {
  nc: NatsConnection;
  subject: string;
  /** Queue group: each message goes to one member (absent: every subscriber gets it). */
  queue?: string | undefined;
  schema: S;
  /** DLQ origin (`tool`, `ctl`, `sched`, …). */
  origin: string;
  subjects?: Subjects | undefined;
  /**
   * Runs inside the message's trace context. For a request (the message has
   * a reply subject) a returned value other than undefined is the reply (JSON, trace headers).
   */
  handler: (envelope: z.output<S>, msg: Msg) => Promise<unknown>;
  /** The reply to an invalid request (default `{ ok: false, error }`); the record goes to the DLQ too. */
  invalidReply?: ((error: DecodeError, msg: Msg) => unknown) | undefined;
  /** The reply when the handler throws on a request (default `{ ok: false, error }`). */
  errorReply?: ((error: unknown) => unknown) | undefined;
  logger?: BusLogger | undefined;
  /** Called after each DLQ record is published (a metrics counter). */
  onDlq?: ((record: { origin: string; subject: string; reason: string }) => void) | undefined;
  what?: string | undefined;
  /**
   * While the handler of a request runs, send a keepalive to its reply subject
   * this often, so a requester using `idleMs` can tell a slow responder from a
   * dead one (see keepalive.ts). Off when absent.
   */
  keepaliveMs?: number | undefined;
  /** For the DLQ records (default: a client on `nc`). */
  js?: JetStreamClient | undefined;
}

/**
 * A core subscription (optionally in a queue group) with the same decode →
 * DLQ → traced handler path as `consumeEnvelopes`, answering requests with
 * what the handler returns. Messages are handled concurrently; nothing a
 * message contains ends the subscription.
 */
export function subscribeEnvelopes<S extends z.ZodType>(options: SubscribeOptions<S>): Subscription {
  ensureContextManager();
  const { nc } = options;
  const logger = options.logger ?? silentBusLogger;
  const what = options.what ?? "envelope";
  const js = options.js ?? jetstream(nc);
  const dlqSubject = options.subjects
    ? options.subjects.dlq(options.origin)
    : dlqSubjectFor(options.subject, options.origin);

  function reply(msg: Msg, body: unknown): void {
    if (body === undefined) return;
    respondJson(msg, body, {
      logger,
      headers: traceHeadersIfAny(),
      // Too large for one NATS message: the handler's answer is an error saying so.
      fallback: (error) => (options.errorReply ? options.errorReply(error) : { ok: false, error: error.message }),
    });
  }

  async function handle(msg: Msg): Promise<void> {
    const decoded = decode(options.schema, msg.data, what);
    if (!decoded.ok) {
      reply(
        msg,
        options.invalidReply ? options.invalidReply(decoded.error, msg) : { ok: false, error: decoded.error.message },
      );
      await publishDlq(
        js,
        dlqSubject,
        dlqRecord({
          origin: options.origin,
          subject: msg.subject,
          reason: decoded.error.message,
          issues: decoded.error.issues,
          data: msg.data,
        }),
      ).catch((error: unknown) =>
        logger.error({ dlq: dlqSubject, err: errorMessage(error) }, "could not publish the DLQ record"),
      );
      logger.warn({ subject: msg.subject, dlq: dlqSubject, reason: decoded.error.message }, `${what} sent to the DLQ`);
      options.onDlq?.({ origin: options.origin, subject: msg.subject, reason: decoded.error.message });
      return;
    }
    const stopKeepalive = options.keepaliveMs ? startKeepalive(nc, msg, options.keepaliveMs) : undefined;
    try {
      const result = await options.handler(decoded.value, msg);
      stopKeepalive?.();
      reply(msg, result);
    } catch (error) {
      stopKeepalive?.();
      logger.error({ subject: msg.subject, err: errorMessage(error) }, `${what} handler failed`);
      reply(msg, options.errorReply ? options.errorReply(error) : { ok: false, error: errorMessage(error) });
    }
  }

  return nc.subscribe(options.subject, {
    ...(options.queue ? { queue: options.queue } : {}),
    callback: (error, msg) => {
      if (error) {
        logger.warn({ subject: options.subject, err: errorMessage(error) }, "subscription error");
        return;
      }
      // nats.js's read loop calls this: nothing may throw out of it (it would stop every subscription).
      try {
        void inMessageSpan("process", msg, {}, () => handle(msg)).catch(() => {});
      } catch (failure) {
        logger.error({ subject: msg.subject, err: errorMessage(failure) }, `${what} could not be handled`);
      }
    },
  });
}
