import type { Subjects } from "@moniro/envelopes";
import {
  DiscardPolicy,
  type JetStreamManager,
  jetstreamManager,
  RetentionPolicy,
  type StreamConfig,
} from "@nats-io/jetstream";
import type { NatsConnection } from "@nats-io/transport-node";
import { type BusLogger, errorMessage, silentBusLogger } from "./logger.js";

export type StreamKey = "in" | "out" | "dlq";

/** How much a stream keeps: the oldest messages go once any limit is passed. */
export interface StreamLimits {
  maxAgeMs: number;
  maxMessages: number;
  maxBytes: number;
}

/** Limits of the streams that nobody empties: MONIRO_OUT (read by bridges and SSE) and MONIRO_DLQ. */
export interface StreamLimitSettings {
  out: StreamLimits;
  dlq: StreamLimits;
}

const DAY_MS = 24 * 60 * 60 * 1_000;
const MIB = 1024 * 1024;
/** JetStream's default: a retried publish within two minutes is stored once. */
const DUPLICATE_WINDOW_MS = 120_000;

/**
 * Outbound waits a week for a stopped bridge or a reconnecting SSE client;
 * dead letters stay a month for inspection. The byte caps are what JetStream
 * reserves on disk per namespace, so they stay modest.
 */
export const DEFAULT_STREAM_LIMITS: StreamLimitSettings = {
  out: { maxAgeMs: 7 * DAY_MS, maxMessages: 100_000, maxBytes: 256 * MIB },
  dlq: { maxAgeMs: 30 * DAY_MS, maxMessages: 100_000, maxBytes: 256 * MIB },
};

type Config = Partial<StreamConfig> & { name: string; subjects: string[] };

function limited(limits: StreamLimits): Partial<StreamConfig> {
  return {
    max_age: limits.maxAgeMs * 1_000_000,
    max_msgs: limits.maxMessages,
    max_bytes: limits.maxBytes,
    discard: DiscardPolicy.Old,
    // JetStream refuses a duplicate window longer than the stream's max age.
    duplicate_window: Math.min(DUPLICATE_WINDOW_MS, limits.maxAgeMs) * 1_000_000,
  };
}

/** The stream configurations of DESIGN §2 for a namespace. */
export function streamConfigs(
  subjects: Subjects,
  limits: StreamLimitSettings = DEFAULT_STREAM_LIMITS,
): Record<StreamKey, Config> {
  return {
    in: { name: subjects.streams.in, subjects: [subjects.inAll], retention: RetentionPolicy.Workqueue },
    out: { name: subjects.streams.out, subjects: [subjects.outAll], ...limited(limits.out) },
    dlq: { name: subjects.streams.dlq, subjects: [subjects.dlqAll], ...limited(limits.dlq) },
  };
}

export interface EnsureStreamsOptions {
  /** Limits of MONIRO_OUT and MONIRO_DLQ (DEFAULT_STREAM_LIMITS when absent). */
  limits?: StreamLimitSettings | undefined;
  /**
   * Bring an existing stream's limits to `limits` when they differ. One
   * service does this (the gateway), so services configured differently do
   * not take turns rewriting the stream; the others only create missing streams.
   */
  updateLimits?: boolean | undefined;
  logger?: BusLogger | undefined;
}

const LIMIT_FIELDS = ["max_age", "max_msgs", "max_bytes", "discard", "duplicate_window"] as const;

/**
 * Makes sure the JetStream streams exist (MONIRO_IN as a work queue,
 * MONIRO_OUT and MONIRO_DLQ bounded by age, count and size; prefixed in a test
 * namespace). Idempotent, and a concurrent creation by another service is fine.
 */
export async function ensureStreams(
  nc: NatsConnection | JetStreamManager,
  subjects: Subjects,
  which: readonly StreamKey[] = ["in", "out", "dlq"],
  options: EnsureStreamsOptions = {},
): Promise<void> {
  const jsm = "streams" in nc ? nc : await jetstreamManager(nc);
  const logger = options.logger ?? silentBusLogger;
  const configs = streamConfigs(subjects, options.limits);
  for (const key of which) {
    const config = configs[key];
    let existing: StreamConfig | undefined;
    try {
      existing = (await jsm.streams.info(config.name)).config;
    } catch {
      try {
        await jsm.streams.add(config);
        continue;
      } catch (error) {
        if (!/already in use|exists/i.test(errorMessage(error))) {
          throw new Error(`could not create JetStream stream ${config.name}: ${errorMessage(error)}`, {
            cause: error,
          });
        }
        existing = (await jsm.streams.info(config.name)).config;
      }
    }
    if (!options.updateLimits || key === "in") continue;
    const changed = LIMIT_FIELDS.filter((field) => existing[field] !== config[field]);
    if (changed.length === 0) continue;
    const update = Object.fromEntries(changed.map((field) => [field, config[field]]));
    try {
      await jsm.streams.update(config.name, update);
      logger.info(
        {
          stream: config.name,
          from: Object.fromEntries(changed.map((field) => [field, existing[field]])),
          to: update,
        },
        `JetStream stream ${config.name}: limits updated`,
      );
    } catch (error) {
      throw new Error(`could not update the limits of JetStream stream ${config.name}: ${errorMessage(error)}`, {
        cause: error,
      });
    }
  }
}

/** Deletes the streams of a test namespace (tests clean up what they made); refuses the production one. */
export async function deleteStreams(nc: NatsConnection | JetStreamManager, subjects: Subjects): Promise<void> {
  if (subjects.namespace === "moniro") throw new Error("deleteStreams refuses to delete the production streams");
  const jsm = "streams" in nc ? nc : await jetstreamManager(nc);
  for (const config of Object.values(streamConfigs(subjects))) {
    await jsm.streams.delete(config.name).catch(() => false);
  }
}
