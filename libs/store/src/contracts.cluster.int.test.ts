import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createRedisStores } from "./connect.js";
import { describeRedisContracts } from "./contract/redis-contracts.js";
import { createKeys } from "./keys.js";
import { type PrivateRedisCluster, startRedisCluster } from "./test/redis-cluster.js";
import { testRedis } from "./test/redis-fixture.js";

// The same contracts against a private 3-master Redis Cluster: every script
// must keep its keys in one slot (the cluster refuses CROSSSLOT otherwise).
let cluster: PrivateRedisCluster | undefined;
beforeAll(async () => {
  cluster = await startRedisCluster();
}, 60_000);
afterAll(async () => {
  await cluster?.stop();
});

function open() {
  if (!cluster) throw new Error("the cluster did not start");
  return testRedis(cluster.url, { cluster: true });
}

describeRedisContracts(" on a Redis Cluster", open);

describe("the key layout on a Redis Cluster", () => {
  it("spreads agents over the masters while each agent's keys stay on one", async () => {
    const t = open();
    try {
      const stores = createRedisStores(t.redis, { prefix: t.prefix });
      const agents = Array.from({ length: 12 }, (_, i) => `agent-${i}`);
      for (const agent of agents) {
        const fence = await stores.lease.acquire(agent, "r1", 10_000);
        if (!fence) throw new Error("expected the lease");
        await stores.state.update(agent, { state: "running" });
      }
      const keys = createKeys(t.prefix);
      const slots = new Set(
        await Promise.all(
          agents.map(async (agent) => Number(await t.redis.call("CLUSTER", "KEYSLOT", keys.state(agent)))),
        ),
      );
      expect(slots.size).toBeGreaterThan(1);
      expect(await stores.state.activeAgents()).toEqual([...agents].sort());
    } finally {
      await t.cleanup();
    }
  });
});
