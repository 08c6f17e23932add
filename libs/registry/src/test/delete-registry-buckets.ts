import { jetstreamManager } from "@nats-io/jetstream";
import type { NatsConnection } from "@nats-io/transport-node";
import { registryBucketNames } from "../agent-registry.js";

/** Test cleanup: deletes the KV buckets a test's registry namespace made (and nothing else). */
export async function deleteRegistryBuckets(nc: NatsConnection, namespace: string): Promise<void> {
  const jsm = await jetstreamManager(nc);
  const names = registryBucketNames(namespace);
  for (const bucket of [names.durable, names.ephemeral])
    await jsm.streams.delete(`KV_${bucket}`).catch(() => undefined);
}
