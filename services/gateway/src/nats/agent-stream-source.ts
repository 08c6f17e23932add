import type { Subjects } from "@moniro/envelopes";
import { AckPolicy, type ConsumerMessages, DeliverPolicy, type JsMsg } from "@nats-io/jetstream";
import { nanos, type Subscription } from "@nats-io/transport-node";
import type { StreamGap } from "../http/gap-frame.js";
import {
  AGENT_STREAM_RESUME,
  type FanoutClient,
  overflowFrame,
  SseFanout,
  type SseFrame,
  type SseSink,
} from "../http/sse-fanout.js";
import { encodeSseFrame } from "../http/sse-writer.js";
import { awaitTaken, CATCH_UP_STALL_MS } from "../http/stall-watch.js";
import type { AgentStream, AgentStreamSource, GatewayLogger } from "../ports.js";
import type { NatsLink } from "./nats-link.js";
import { forwardableEvent, forwardableOutbound } from "./sse-payload.js";

/** `event: unreadable` for MONIRO_OUT message `seq`, an agent's but not one to forward (docs/api.md). */
function unreadableFrame(seq: number, reason: string): Buffer {
  const message = `message ${seq} for this agent is not an outbound envelope that can be forwarded (${reason}): it is skipped, the stream goes on after it`;
  return encodeSseFrame(
    "unreadable",
    Buffer.from(JSON.stringify({ error: { code: "corrupt_entry", message }, id: String(seq) })),
    seq,
  );
}

/**
 * How long the server keeps a consumer nobody pulls from: the fallback for a
 * gateway that dies without deleting its consumers. It outlasts one pull
 * (PULL_EXPIRES_MS), so a live consumer never counts as inactive.
 */
export const SSE_CONSUMER_INACTIVE_MS = 30_000;
const PULL_EXPIRES_MS = 10_000;

/** A subscription or consumer shared by the SSE streams that use it. */
interface SharedEntry<T> {
  users: number;
  ready: Promise<T>;
}

/** The gateway's one consumer of `http:` outbound messages, while it has SSE clients. */
interface OutboundFeed {
  /** Stream sequence of the last message it received (every agent's). */
  delivered: number;
  stop(): Promise<void>;
}

/**
 * Agents' SSE feeds from NATS, one subscription per gateway fanned out to
 * every SSE client (http/sse-fanout.ts), each frame encoded once:
 * - events: one core subscription per watched agent on `moniro.evt.<agent>.*`
 *   (live only; core publishes are not stored, so they have no id and are
 *   not replayed), shared by the agent's clients. Per agent, not one
 *   wildcard, so a gateway decodes only the events of agents someone watches
 *   (llm-delta events of busy agents nobody watches would cost it CPU).
 * - outbound: one ephemeral JetStream consumer (in memory, no acks) on
 *   MONIRO_OUT filtered to `moniro.out.http`, while the gateway has SSE
 *   clients. Each message carries its stream sequence as SSE `id:`.
 * - resume: a client with Last-Event-ID gets the stored messages after it
 *   from a consumer of its own that lives only for the replay (deleted after
 *   it), while the live frames for it are kept; then the kept frames it does
 *   not have yet, then live. Nothing lost, nothing twice, in order. The
 *   stored messages are written as the client takes them; one that takes
 *   none for `stallMs` meanwhile is sent an `overflow` event and
 *   disconnected, its consumers released (nothing new need be published to
 *   push it past `maxBufferedBytes`, so it would otherwise be held forever).
 *
 * Without Last-Event-ID delivery starts with the next stored message.
 * Consumers are deleted when no longer needed; the server drops them by
 * itself after SSE_CONSUMER_INACTIVE_MS if the gateway could not. Envelopes
 * that are not safe to forward are skipped here and logged (nats/sse-payload.ts;
 * the gateway only reads, their producer's consumer routes them to the DLQ).
 */
export function natsAgentStreamSource(options: {
  link: NatsLink;
  subjects: Subjects;
  logger: GatewayLogger;
  /** Bytes that may wait for one slow client before it is disconnected with an `overflow` event. */
  maxBufferedBytes: number;
  /** How long frames may wait to be joined with those that follow (http/sse-fanout.ts); default 0. */
  flushMs?: number;
  /** How long a client catching up may take nothing before it is disconnected (30 s). */
  stallMs?: number;
  /** Called for each client disconnected for falling behind or stalling (a metric). */
  slowClientDropped?: () => void;
}): AgentStreamSource {
  const { link, subjects, logger } = options;
  const stallMs = options.stallMs ?? CATCH_UP_STALL_MS;
  const stream = subjects.streams.out;
  const dropped = options.slowClientDropped ?? (() => {});
  const fanout = new SseFanout({ maxBufferedBytes: options.maxBufferedBytes, flushMs: options.flushMs ?? 0, dropped });
  // Shared by their users; a release only counts against the entry its user acquired, so the users of
  // one that failed and was replaced do not stop its successor.
  const eventSubscriptions = new Map<string, SharedEntry<Subscription>>();
  let feed: SharedEntry<OutboundFeed> | undefined;
  const hasClients = (agent: string) => fanout.hasClients(agent);

  function consumerConfig(startSequence: number) {
    return {
      filter_subject: subjects.out("http"),
      deliver_policy: DeliverPolicy.StartSequence,
      opt_start_seq: Math.max(1, startSequence),
      ack_policy: AckPolicy.None,
      inactive_threshold: nanos(SSE_CONSUMER_INACTIVE_MS),
      mem_storage: true,
      num_replicas: 1,
    };
  }

  /**
   * The outbound message's agent and SSE frame, or undefined if it is not one to forward (logged) or,
   * given `wanted`, its agent is not wanted (not validated: the live feed carries every agent's replies).
   * One that is not valid but names an agent (a string) is that agent's `event: unreadable` frame, with
   * its sequence as `id:`, so its clients are told it was skipped and a reconnect resumes after it.
   * Encoded once per message, whatever the number of clients.
   */
  function checkedOutbound(
    msg: JsMsg,
    wanted?: (agent: string) => boolean,
  ): { agent: string; frame: SseFrame } | undefined {
    const checked = forwardableOutbound(msg.data, wanted);
    if (checked.ok === "unwanted") return undefined;
    if (!checked.ok) {
      logger.warn(
        { subject: msg.subject, seq: msg.seq, agent: checked.agent, err: checked.reason },
        "skipping an invalid outbound envelope",
      );
      if (checked.agent === undefined) return undefined;
      return { agent: checked.agent, frame: { seq: msg.seq, bytes: unreadableFrame(msg.seq, checked.reason) } };
    }
    return {
      agent: checked.value.agent,
      frame: { seq: msg.seq, bytes: encodeSseFrame("message", checked.bytes, msg.seq) },
    };
  }

  /** `onFailure`: the consumer stopped with an error (its clients are closed and reconnect). */
  async function startFeed(onFailure: () => void): Promise<OutboundFeed> {
    const { js, jsm } = link.get();
    const last = (await jsm.streams.info(stream)).state.last_seq ?? 0;
    const { name } = await jsm.consumers.add(stream, consumerConfig(last + 1));
    const deleteConsumer = () => jsm.consumers.delete(stream, name).catch(() => false);
    const state: OutboundFeed & { messages?: ConsumerMessages } = {
      delivered: last,
      async stop() {
        await state.messages?.close().catch(() => undefined);
        await deleteConsumer();
      },
    };
    try {
      const consumer = await js.consumers.get(stream, name);
      state.messages = await consumer.consume({
        expires: PULL_EXPIRES_MS,
        callback: (msg) => {
          state.delivered = msg.seq;
          const out = checkedOutbound(msg, hasClients);
          if (out) fanout.publish(out.agent, out.frame);
        },
      });
    } catch (error) {
      await deleteConsumer();
      throw error;
    }
    void state.messages.closed().then((error) => {
      if (!error) return;
      logger.warn({ err: error.message }, "the SSE outbound consumer stopped; SSE clients reconnect");
      onFailure();
      fanout.closeAll();
    });
    return state;
  }

  function dropFeed(): void {
    const stopping = feed;
    feed = undefined;
    void stopping?.ready.then((current) => current.stop()).catch(() => undefined);
  }

  async function acquireFeed(): Promise<{ value: OutboundFeed; entry: SharedEntry<OutboundFeed> }> {
    if (!feed) {
      const entry: SharedEntry<OutboundFeed> = { users: 0, ready: Promise.resolve() as never };
      entry.ready = startFeed(() => {
        if (feed === entry) dropFeed();
      });
      entry.ready.catch(() => {
        if (feed === entry) feed = undefined;
      });
      feed = entry;
    }
    const entry = feed;
    entry.users++;
    try {
      return { value: await entry.ready, entry };
    } catch (error) {
      entry.users--;
      throw error;
    }
  }

  function releaseFeed(entry: SharedEntry<OutboundFeed>): void {
    entry.users--;
    if (entry.users === 0 && feed === entry) dropFeed();
  }

  function subscribeEvents(agent: string, entry: SharedEntry<Subscription>): Promise<Subscription> {
    const { nc } = link.get();
    const subscription = nc.subscribe(subjects.evtAgent(agent), {
      callback: (error, msg) => {
        if (error) {
          logger.warn({ agent, err: error.message }, "the SSE event subscription failed; SSE clients reconnect");
          if (eventSubscriptions.get(agent) === entry) eventSubscriptions.delete(agent);
          fanout.closeAll(agent);
          return;
        }
        const checked = forwardableEvent(agent, msg.data);
        if (!checked.ok) {
          logger.warn({ subject: msg.subject, err: checked.reason }, "skipping an invalid event envelope");
          return;
        }
        fanout.publish(agent, { bytes: encodeSseFrame(checked.value.type, checked.bytes) }, checked.value.burstEnds);
      },
    });
    return nc.flush().then(
      () => subscription,
      (error: unknown) => {
        subscription.unsubscribe();
        throw error;
      },
    );
  }

  async function acquireEvents(agent: string): Promise<SharedEntry<Subscription>> {
    let entry = eventSubscriptions.get(agent);
    if (!entry) {
      const created: SharedEntry<Subscription> = { users: 0, ready: Promise.resolve() as never };
      created.ready = subscribeEvents(agent, created);
      created.ready.catch(() => {
        if (eventSubscriptions.get(agent) === created) eventSubscriptions.delete(agent);
      });
      eventSubscriptions.set(agent, created);
      entry = created;
    }
    entry.users++;
    try {
      await entry.ready;
      return entry;
    } catch (error) {
      entry.users--;
      throw error;
    }
  }

  function releaseEvents(agent: string, entry: SharedEntry<Subscription>): void {
    entry.users--;
    if (entry.users > 0) return;
    if (eventSubscriptions.get(agent) === entry) eventSubscriptions.delete(agent);
    void entry.ready.then((subscription) => subscription.unsubscribe()).catch(() => undefined);
  }

  /**
   * The stored messages of the client's agent in (after, upTo], through a consumer of its own, each once the
   * client has taken most of those before; `stalledAfter`: it took none of them for `stallMs`, the sequence
   * of the last one written to it.
   */
  async function replay(
    client: FanoutClient,
    sink: SseSink,
    after: number,
    upTo: number,
  ): Promise<{ stalledAfter?: number }> {
    const { js, jsm } = link.get();
    const { name, num_pending } = await jsm.consumers.add(stream, consumerConfig(after + 1));
    let messages: ConsumerMessages | undefined;
    const stop = () => void messages?.close().catch(() => undefined);
    client.signal.addEventListener("abort", stop);
    try {
      if (num_pending === 0 || client.signal.aborted) return {};
      const consumer = await js.consumers.get(stream, name);
      messages = await consumer.consume({ expires: PULL_EXPIRES_MS, max_messages: 256 });
      if (client.signal.aborted) return {};
      const wanted = (agent: string) => agent === client.agent;
      for await (const msg of messages) {
        if (msg.seq > upTo) break;
        const out = checkedOutbound(msg, wanted);
        if (out?.agent === client.agent) {
          client.replay(out.frame);
          // The next once the client has taken most of what waits for it.
          if (sink.buffered > options.maxBufferedBytes / 2) {
            const buffered = () => sink.buffered;
            const taken = await awaitTaken({ drained: sink.drained(), buffered, stallMs, stopping: client.signal });
            if (taken === "stalled") return { stalledAfter: msg.seq };
          }
        }
        if (client.signal.aborted || msg.seq >= upTo || msg.info.pending === 0) break;
      }
      return {};
    } finally {
      client.signal.removeEventListener("abort", stop);
      await messages?.close().catch(() => undefined);
      await jsm.consumers.delete(stream, name).catch(() => false);
    }
  }

  return {
    async open(agent, { afterSequence }): Promise<AgentStream> {
      const events = await acquireEvents(agent);
      let outbound: { value: OutboundFeed; entry: SharedEntry<OutboundFeed> };
      try {
        outbound = await acquireFeed();
      } catch (error) {
        releaseEvents(agent, events);
        throw error;
      }
      let client: FanoutClient | undefined;
      let closing: Promise<void> | undefined;
      let startsAfter = afterSequence ?? outbound.value.delivered;
      let gap: StreamGap | undefined;
      if (afterSequence !== undefined && afterSequence !== outbound.value.delivered) {
        // A resume (one request per resuming client, never per event): an id past the stream's end (from before
        // the stream was recreated, or made up) would hold back every message until the stream reached it; one
        // before its first stored message means those between were removed by MONIRO_OUT's limits. Either way
        // the client is told (a gap event), never left with a silent gap.
        try {
          const state = (await link.get().jsm.streams.info(stream)).state;
          const last = state.last_seq ?? 0;
          const first = state.first_seq ?? 0;
          if (afterSequence > last) {
            logger.info(
              { agent, lastEventId: afterSequence, streamLast: last },
              "Last-Event-ID past the stream's end; resuming from its end",
            );
            startsAfter = last;
            gap = {
              code: "unknown_event_id",
              message: `Last-Event-ID ${afterSequence} is past the last message ${stream} holds (${last}), so it is not an id this stream sent (it was recreated since, or the id is not one of its): resuming after ${last}; messages stored before this connection are not sent (GET /v1/agents/${agent}/thread has the agent's history)`,
              lastEventId: String(afterSequence),
              resumesAfter: String(last),
            };
          } else if (afterSequence + 1 < first) {
            startsAfter = first - 1;
            gap = {
              code: "messages_removed",
              message: `the messages after Last-Event-ID ${afterSequence} up to ${first - 1} are no longer stored (${stream}'s age, count and size limits, MONIRO_OUT_MAX_*), so any of them for this agent is lost to this client: resuming after ${first - 1} (GET /v1/agents/${agent}/thread has the agent's history)`,
              lastEventId: String(afterSequence),
              resumesAfter: String(first - 1),
            };
          }
        } catch (error) {
          releaseEvents(agent, events);
          releaseFeed(outbound.entry);
          throw error;
        }
      }
      const close = () => {
        closing ??= (async () => {
          client?.remove();
          releaseEvents(agent, events);
          releaseFeed(outbound.entry);
        })();
        return closing;
      };
      return {
        startsAfter,
        ...(gap ? { gap } : {}),
        attach(sink: SseSink) {
          if (client || closing) return;
          const upTo = outbound.value.delivered;
          // What arrived between open and attach is replayed, so the preamble's id holds.
          const replaying = startsAfter < upTo;
          client = fanout.add(agent, sink, { afterSequence: startsAfter, replaying });
          if (!replaying) return;
          const resuming = client;
          replay(resuming, sink, startsAfter, upTo).then(
            ({ stalledAfter }) => {
              if (stalledAfter === undefined) return resuming.live();
              void close();
              dropped();
              sink.close(
                overflowFrame({
                  maxBufferedBytes: options.maxBufferedBytes,
                  lastEventId: String(stalledAfter),
                  resume: AGENT_STREAM_RESUME,
                  stalledMs: stallMs,
                }),
              );
            },
            (error: unknown) => {
              logger.warn(
                { agent, err: (error as Error).message },
                "cannot replay outbound messages for an SSE client",
              );
              resuming.remove();
              sink.close();
            },
          );
        },
        close,
      };
    },
  };
}
