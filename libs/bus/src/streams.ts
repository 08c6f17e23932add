import type { Subjects } from "@moniro/envelopes";
import { type JetStreamManager, jetstreamManager, RetentionPolicy, type StreamConfig } from "@nats-io/jetstream";
import type { NatsConnection } from "@nats-io/transport-node";

export type StreamKey = "in" | "out" | "dlq";

/** The stream configurations of DESIGN §2 for a namespace. */
export function streamConfigs(
  subjects: Subjects,
): Record<StreamKey, Partial<StreamConfig> & { name: string; subjects: string[] }> {
  return {
    in: { name: subjects.streams.in, subjects: [subjects.inAll], retention: RetentionPolicy.Workqueue },
    out: { name: subjects.streams.out, subjects: [subjects.outAll] },
    dlq: { name: subjects.streams.dlq, subjects: [subjects.dlqAll] },
  };
}

/**
 * Makes sure the JetStream streams exist (MONIRO_IN as a work queue,
 * MONIRO_OUT, MONIRO_DLQ; prefixed in a test namespace). Idempotent: existing
 * streams are left as they are, and a concurrent creation by another service is fine.
 */
export async function ensureStreams(
  nc: NatsConnection | JetStreamManager,
  subjects: Subjects,
  which: readonly StreamKey[] = ["in", "out", "dlq"],
): Promise<void> {
  const jsm = "streams" in nc ? nc : await jetstreamManager(nc);
  const configs = streamConfigs(subjects);
  for (const key of which) {
    const config = configs[key];
    try {
      await jsm.streams.info(config.name);
    } catch {
      try {
        await jsm.streams.add(config);
      } catch (error) {
        if (!/already in use|exists/i.test((error as Error).message)) {
          throw new Error(`could not create JetStream stream ${config.name}: ${(error as Error).message}`, {
            cause: error,
          });
        }
      }
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
