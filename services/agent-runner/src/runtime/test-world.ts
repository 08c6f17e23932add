import { randomBytes } from "node:crypto";
import { createSubjects, type Subjects } from "@moniro/envelopes";
import { type TestRedis, testRedis } from "@moniro/store/test";
import { jetstreamManager } from "@nats-io/jetstream";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { afterEach, beforeEach } from "vitest";
import type { Runner } from "./runner.js";

export const TEST_NATS_URL = process.env.MONIRO_TEST_NATS_URL ?? "nats://127.0.0.1:4222";

/** One test's share of the machine's NATS and Redis: its own namespace and key prefix. */
export interface RunnerWorld {
  namespace: string;
  subjects: Subjects;
  /** The test's own connection (streams, publishing, watching). */
  nc: NatsConnection;
  redis: TestRedis;
  /** Runners the test started: stopped after it. */
  runners: Runner[];
  /** Further NATS connections the test opened: drained after it. */
  connections: NatsConnection[];
}

/**
 * A fresh world for each test of the calling `describe` (`started` receives it); after the test its
 * runners are stopped, its connections drained, its streams and Redis keys deleted, and nothing else.
 */
export function useRunnerWorld(started: (world: RunnerWorld) => void): void {
  let world: RunnerWorld | undefined;
  beforeEach(async () => {
    const namespace = `t${randomBytes(5).toString("hex")}`;
    world = {
      namespace,
      subjects: createSubjects(namespace),
      nc: await connect({ servers: TEST_NATS_URL }),
      redis: testRedis(),
      runners: [],
      connections: [],
    };
    started(world);
  });
  afterEach(async () => {
    if (!world) return;
    const { runners, connections, nc, subjects, redis } = world;
    world = undefined;
    for (const runner of runners.splice(0)) await runner.stop();
    for (const connection of connections.splice(0)) await connection.drain();
    const jsm = await jetstreamManager(nc);
    for (const stream of Object.values(subjects.streams)) await jsm.streams.delete(stream).catch(() => undefined);
    await nc.close();
    await redis.cleanup();
  });
}
