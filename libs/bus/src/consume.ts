import type { Subjects } from "@moniro/envelopes";
import { decode } from "@moniro/envelopes";
import { ensureContextManager } from "@moniro/telemetry";
import { AckPolicy, type ConsumerConfig, type JetStreamClient, type JsMsg } from "@nats-io/jetstream";
import type { z } from "zod";
import { dlqRecord, dlqSubjectFor, publishDlq } from "./dlq.js";
import { type BusLogger, errorMessage, silentBusLogger } from "./logger.js";
import { inMessageSpan } from "./message-span.js";
import { readHeaders } from "./trace-headers.js";

/** What a handler may return: nothing (ack), or a reason to dead-letter the envelope (term). */
// biome-ignore lint/suspicious/noConfusingVoidType: handlers that return nothing (ack) are the usual case
export type HandlerOutcome = void | undefined | { dlq: string };

export interface ConsumeOptions<S extends z.ZodType> {
  js: JetStreamClient;
  stream: string;
  /** Durable consumer name (shared by every replica: each message goes to one of them). */
  durable: string;
  /** Subject filter inside the stream (all of it when absent). */
  filter?: string | undefined;
  schema: S;
  /** DLQ origin (`in`, `out`, …): invalid envelopes go to `<ns>.dlq.<origin>`. */
  origin: string;
  /** The namespace's subjects (for the DLQ subject); else the filter's first token is the namespace. */
  subjects?: Subjects | undefined;
  /** Runs inside the message's trace context; resolves → ack, throws → nak with `retryDelayMs`. */
  handler: (envelope: z.output<S>, msg: JsMsg) => Promise<HandlerOutcome>;
  logger?: BusLogger | undefined;
  /** What the envelope is called in DLQ reasons and logs ("inbound envelope"). */
  what?: string | undefined;
  /** Redelivery delay after a handler failure (default 1 s), or a function of the deliveries so far (backoff). */
  retryDelayMs?: number | ((deliveries: number) => number) | undefined;
  /** How long a message may stay unacknowledged before redelivery (default 30 s). */
  ackWaitMs?: number | undefined;
  /** Called after each DLQ record is published (a metrics counter). */
  onDlq?: ((record: { origin: string; subject: string; reason: string }) => void) | undefined;
  /** Messages buffered per pull (default 64). */
  maxMessages?: number | undefined;
  /**
   * Handle the messages that arrived together as one batch (group commit): every message in hand
   * is started in the same tick, so the handlers' writes leave together (one Redis round trip for
   * N envelopes on an auto-pipelined client), and the batch's acks go out in one NATS flush. The
   * next batch starts once this one is done (it holds what arrived meanwhile). Messages on one
   * subject stay in order: within a batch each waits for the one before it on its subject.
   * Default false: one message at a time.
   */
  batch?: boolean | undefined;
  /**
   * How a message's settle (ack, term, nak) is sent: default at once. `Bus.piggyback` sends it
   * with the connection's next write (the events the handled input causes a moment later), one
   * socket write fewer per message; settles still pending are sent before `stop` resolves.
   */
  settleWith?: ((send: () => void) => void) | undefined;
}

export interface EnvelopeConsumer {
  /** Stops pulling and waits for the message in hand to finish. */
  stop(): Promise<void>;
  /** Resolves when the consume loop ends (after stop, or if the consumer was deleted). */
  done: Promise<void>;
}

/**
 * A durable JetStream consumer of envelopes. Each message is decoded with the
 * schema: invalid → a DLQ record with the zod issues, then `term` (once per
 * stored message, see `terminate`); valid →
 * `handler` inside the message's trace context, `ack` after it resolved (or
 * DLQ + term when it returns `{ dlq }`), `nak` with a delay when it throws.
 * Nothing a message contains stops the loop.
 */
export async function consumeEnvelopes<S extends z.ZodType>(options: ConsumeOptions<S>): Promise<EnvelopeConsumer> {
  ensureContextManager();
  const { js, stream, durable } = options;
  const logger = options.logger ?? silentBusLogger;
  const what = options.what ?? "envelope";
  const dlqSubject = options.subjects
    ? options.subjects.dlq(options.origin)
    : dlqSubjectFor(options.filter ?? stream.toLowerCase(), options.origin);
  await ensureConsumer(js, stream, durable, {
    ack_policy: AckPolicy.Explicit,
    ack_wait: (options.ackWaitMs ?? 30_000) * 1_000_000,
    ...(options.filter ? { filter_subject: options.filter } : {}),
  });
  const consumer = await js.consumers.get(stream, durable);
  const limit = options.maxMessages ?? 64;
  // Batched: each message is handed over as nats.js parses it (its callback), not through the
  // async iterator, and a batch starts once the messages of that socket read are all queued.
  const batcher = options.batch
    ? new Batcher(
        (batch) => handleBatch(batch),
        limit,
        (error) => logger.error({ err: errorMessage(error) }, `a batch of ${what}s failed; they will be redelivered`),
      )
    : undefined;
  const messages = await consumer.consume(
    batcher ? { max_messages: limit, callback: (msg) => batcher.push(msg) } : { max_messages: limit },
  );

  async function toDlq(msg: JsMsg, reason: string, issues: { path: string; message: string }[]): Promise<void> {
    // One record per stored message: a redelivery (the term lost with a dropped connection)
    // publishes the same Nats-Msg-Id, which MONIRO_DLQ's duplicate window drops.
    await publishDlq(
      js,
      dlqSubject,
      dlqRecord({ origin: options.origin, subject: msg.subject, reason, issues, data: msg.data }),
      { msgId: `dlq:${msg.info.stream}:${msg.seq}` },
    );
    logger.warn({ subject: msg.subject, dlq: dlqSubject, reason }, `${what} sent to the DLQ`);
    options.onDlq?.({ origin: options.origin, subject: msg.subject, reason });
  }

  /** Handles a message; returns how to settle it (ack or term), which the caller does. */
  async function handle(msg: JsMsg): Promise<() => void> {
    const decoded = decode(options.schema, msg.data, what);
    if (!decoded.ok) {
      await toDlq(msg, decoded.error.message, decoded.error.issues);
      return () => terminate(msg);
    }
    const outcome = await options.handler(decoded.value, msg);
    if (outcome && "dlq" in outcome) {
      await toDlq(msg, outcome.dlq, []);
      return () => terminate(msg);
    }
    return () => msg.ack();
  }

  /** One message: its handler inside the message's trace; how it is settled (ack, term, nak) is returned, not done. */
  async function settleOne(msg: JsMsg): Promise<() => void> {
    const headers = readHeaders(msg);
    try {
      if (!headers.ok) {
        await toDlq(msg, `the message was not handled: ${headers.reason}`, []);
        return () => terminate(msg);
      }
      const id = headers.headers?.get("Nats-Msg-Id");
      return await inMessageSpan(
        "receive",
        msg,
        { ...(id ? { "messaging.message.id": id } : {}), "moniro.redeliveries": msg.info.deliveryCount - 1 },
        () => handle(msg),
      );
    } catch (error) {
      logger.warn(
        { subject: msg.subject, err: errorMessage(error), deliveries: msg.info.deliveryCount },
        `${what} handling failed; it will be redelivered`,
      );
      const delay = options.retryDelayMs ?? 1_000;
      return () => msg.nak(typeof delay === "function" ? delay(msg.info.deliveryCount) : delay);
    }
  }

  /** A batch: all started in one tick (in order per subject), settled together once all are done. */
  async function handleBatch(batch: readonly JsMsg[]): Promise<void> {
    const last = new Map<string, Promise<unknown>>();
    const settles = batch.map((msg) => {
      const before = last.get(msg.subject);
      const settle = before ? before.then(() => settleOne(msg)) : settleOne(msg);
      last.set(msg.subject, settle);
      return settle;
    });
    for (const settle of await Promise.all(settles)) settleSafely(settle);
  }

  /** Acks (or terms, naks) a message; a connection that closed meanwhile leaves it to redelivery. */
  function settleNow(settle: () => void): void {
    try {
      settle();
    } catch (error) {
      logger.warn({ err: errorMessage(error) }, `could not settle a ${what}; it will be redelivered`);
    }
  }

  /** Settles handed to `settleWith` and not sent yet; `stop` waits for them. */
  let unsent = 0;
  let allSent: (() => void) | undefined;
  function settleSafely(settle: () => void): void {
    const { settleWith } = options;
    if (!settleWith) {
      settleNow(settle);
      return;
    }
    unsent++;
    settleWith(() => {
      settleNow(settle);
      unsent--;
      if (unsent === 0) allSent?.();
    });
  }

  const done = batcher
    ? messages.closed().then(() => batcher.drained())
    : (async () => {
        for await (const msg of messages) settleSafely(await settleOne(msg));
      })();

  return {
    done,
    async stop() {
      messages.stop();
      await done;
      if (unsent > 0) await new Promise<void>((resolve) => (allSent = resolve));
    },
  };
}

/**
 * The batched consume loop: messages are queued as nats.js hands them over;
 * one batch at a time takes everything queued (up to `limit`). A batch starts
 * on `process.nextTick`, after the messages of the socket read in hand have
 * all been queued (nats.js parses a read in one go), without waiting for the
 * event loop's next turn; what arrives while a batch is handled forms the next.
 */
class Batcher {
  private readonly queued: JsMsg[] = [];
  private working: Promise<void> | undefined;

  constructor(
    private readonly handleBatch: (batch: readonly JsMsg[]) => Promise<void>,
    private readonly limit: number,
    private readonly onError: (error: unknown) => void,
  ) {}

  push(msg: JsMsg): void {
    this.queued.push(msg);
    // settleOne never throws; should a batch still fail, its messages are redelivered after the ack wait.
    this.working ??= new Promise<void>((resolve) => process.nextTick(resolve))
      .then(() => this.work())
      .catch((error: unknown) => this.onError(error));
  }

  /** Resolves once the batch under way (and everything queued) is done. */
  async drained(): Promise<void> {
    await this.working;
  }

  private async work(): Promise<void> {
    try {
      while (this.queued.length > 0) await this.handleBatch(this.queued.splice(0, this.limit));
    } finally {
      this.working = undefined;
    }
  }
}

/**
 * `term()` without a reason: nats-server before 2.11 ignores a `+TERM <reason>`
 * altogether and redelivers the message after every ack wait. The reason is
 * in the DLQ record instead.
 */
function terminate(msg: JsMsg): void {
  msg.term();
}

/** Creates the durable consumer unless it exists (another replica may create it concurrently). */
async function ensureConsumer(
  js: JetStreamClient,
  stream: string,
  durable: string,
  config: Partial<ConsumerConfig>,
): Promise<void> {
  const jsm = await js.jetstreamManager();
  try {
    await jsm.consumers.info(stream, durable);
  } catch {
    try {
      await jsm.consumers.add(stream, { durable_name: durable, ...config });
    } catch (error) {
      if (!/already|exists/i.test(errorMessage(error))) {
        throw new Error(
          `could not create the durable consumer ${durable} on stream ${stream}: ${errorMessage(error)}`,
          {
            cause: error,
          },
        );
      }
    }
  }
}
