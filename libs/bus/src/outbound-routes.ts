import type { Subjects } from "@moniro/envelopes";
import type { OutboundCheck } from "@moniro/ports";
import { type ConsumerInfo, type JetStreamManager, jetstreamManager } from "@nats-io/jetstream";
import type { NatsConnection } from "@nats-io/transport-node";
import { errorMessage } from "./logger.js";

/**
 * The durable consumer on MONIRO_OUT (filtered to `<ns>.out.<channel>`) that
 * the bridge of `channel` pulls from. Its existence is how the rest of the
 * system learns that the channel is served.
 */
export function outboundConsumerName(channel: string): string {
  return `outbound-${channel}`;
}

/**
 * Channels served without a durable consumer: every gateway reads `http`
 * outbound straight from the stream for its SSE clients (who resume with
 * Last-Event-ID), so it waits there, within MONIRO_OUT's limits, for a client.
 */
export const STREAM_READ_CHANNELS: readonly string[] = ["http"];

/** Channels that are addresses of inputs only: nothing ever delivers outbound to them. */
const REASONS: Record<string, string> = {
  cron: "'cron:' is where scheduled inputs come from, not a place to send to; to be reminded, use the cron tool",
  agent:
    "agent-to-agent DMs do not exist: agents of a team talk in their workspace channel with channel_send (an @name there wakes that member); a sub-agent's report reaches its parent when its task ends",
  ws: "'ws:' is a workspace channel, not a message target: post there with channel_send (an @name wakes that member)",
};

/** Whether `channel` only ever addresses inputs (`cron`, `agent`, `ws`): outbound to it reaches nobody. */
export function isInboundOnlyChannel(channel: string): boolean {
  return Object.hasOwn(REASONS, channel);
}

export interface OutboundRoutes {
  /** Whether outbound to `channel` reaches anyone, and if not why (cached for `cacheMs`). */
  check(channel: string): Promise<OutboundCheck>;
}

/**
 * Answers "does a bridge serve this channel?" from MONIRO_OUT's durable
 * consumers, each answer cached a few seconds so a busy agent does not ask
 * JetStream on every message. A bridge that starts is seen within `cacheMs`.
 */
export function outboundRoutes(options: {
  nc: NatsConnection | JetStreamManager;
  subjects: Subjects;
  cacheMs?: number;
  now?: () => number;
}): OutboundRoutes {
  const { subjects } = options;
  const cacheMs = options.cacheMs ?? 5_000;
  const now = options.now ?? Date.now;
  const cache = new Map<string, { at: number; check: Promise<OutboundCheck> }>();
  let manager: Promise<JetStreamManager> | undefined;
  const jsm = () => {
    const { nc } = options;
    if (!manager) {
      const created = "streams" in nc ? Promise.resolve(nc) : jetstreamManager(nc);
      manager = created;
      // A failed start (JetStream not answering yet) is not kept: the next look-up tries again.
      created.catch(() => {
        if (manager === created) manager = undefined;
      });
    }
    return manager;
  };

  async function lookUp(channel: string): Promise<OutboundCheck> {
    const fixed = REASONS[channel];
    if (fixed) return { served: false, reason: fixed };
    if (STREAM_READ_CHANNELS.includes(channel)) return { served: true };
    try {
      await (await jsm()).consumers.info(subjects.streams.out, outboundConsumerName(channel));
      return { served: true };
    } catch (error) {
      if (!/not found/i.test(errorMessage(error))) throw error;
      return {
        served: false,
        reason: `no bridge serves '${channel}:' (no consumer ${outboundConsumerName(channel)} on ${subjects.streams.out}); start the ${channel} bridge, or send to a channel that is served, e.g. 'http:<user>'`,
      };
    }
  }

  return {
    check(channel) {
      const cached = cache.get(channel);
      if (cached && now() - cached.at < cacheMs) return cached.check;
      const check = lookUp(channel);
      cache.set(channel, { at: now(), check });
      // A failed look-up (NATS down) is not remembered: the next message asks again.
      check.catch(() => cache.delete(channel));
      return check;
    },
  };
}

/** What waits on MONIRO_OUT for one bridge. */
export interface OutboundBacklog {
  channel: string;
  /** Messages stored for the channel and not yet delivered, plus delivered but not yet acknowledged. */
  pending: number;
  /** Pull requests waiting: 0 means no bridge process is pulling right now. */
  pulling: number;
  /** Something waits and nobody pulls: the bridge is stopped or stuck. */
  stalled: boolean;
}

export function backlogOf(info: ConsumerInfo): OutboundBacklog {
  const channel = info.name.slice(outboundConsumerName("").length);
  const pending = info.num_pending + info.num_ack_pending;
  return { channel, pending, pulling: info.num_waiting, stalled: pending > 0 && info.num_waiting === 0 };
}

/** The backlog of every bridge's durable consumer on MONIRO_OUT (`outbound-<channel>`). */
export async function outboundBacklogs(
  nc: NatsConnection | JetStreamManager,
  subjects: Subjects,
): Promise<OutboundBacklog[]> {
  const jsm = "streams" in nc ? nc : await jetstreamManager(nc);
  const backlogs: OutboundBacklog[] = [];
  for await (const info of jsm.consumers.list(subjects.streams.out)) {
    if (info.config.durable_name?.startsWith(outboundConsumerName(""))) backlogs.push(backlogOf(info));
  }
  return backlogs.sort((a, b) => a.channel.localeCompare(b.channel));
}

/** The backlog of one channel's bridge, or undefined when that bridge has no consumer. */
export async function outboundBacklog(
  nc: NatsConnection | JetStreamManager,
  subjects: Subjects,
  channel: string,
): Promise<OutboundBacklog | undefined> {
  const jsm = "streams" in nc ? nc : await jetstreamManager(nc);
  try {
    return backlogOf(await jsm.consumers.info(subjects.streams.out, outboundConsumerName(channel)));
  } catch (error) {
    if (/not found/i.test(errorMessage(error))) return undefined;
    throw error;
  }
}
