import { inbound } from "@moniro/ports/test";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createRedisStores } from "./connect.js";
import { describeRedisContracts } from "./contract/redis-contracts.js";
import { createKeys } from "./keys.js";
import { RedisInbox } from "./redis-inbox.js";
import { type PrivateRedisCluster, startRedisCluster } from "./test/redis-cluster.js";
import { testRedis } from "./test/redis-fixture.js";
import { RedisWorkspaceStore } from "./workspace/redis-workspace-store.js";

// The same contracts against a private 3-master Redis Cluster: every script
// must keep its keys in one slot (the cluster refuses CROSSSLOT otherwise).
// One cluster for every cluster test of this package (starting one costs seconds).
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
      // The runner's reconciliation reads each agent's lanes and state in one script, on whatever master holds them.
      await stores.inbox.append(inbound({ agent: "agent-3", text: "waiting" }));
      const work = await Promise.all(agents.map((agent) => stores.state.pendingWork(agent)));
      expect(work).toEqual(
        agents.map((agent) => ({ inputs: agent === "agent-3" ? 1 : 0, active: true, quarantined: 0 })),
      );
    } finally {
      await t.cleanup();
    }
  });
});

// Every workspace script: an instance's keys share one slot, and the global
// index is written outside the scripts.
describe("the workspace store on a Redis Cluster", () => {
  it("runs every operation of several instances spread over the masters, then discards them", async () => {
    const t = open();
    try {
      const store = new RedisWorkspaceStore(t.redis, { prefix: t.prefix });
      const tags = Array.from({ length: 6 }, (_, index) => `pr-${index}`);
      for (const tag of tags) {
        const instance = store.instance("review", tag);
        await instance.start([
          { name: "alice", agent: "alice", kind: "ref" },
          { name: "bob", agent: "bob", kind: "ref" },
        ]);
        const post = await instance.channel.post({ from: "alice", text: `@bob look at ${tag} @carol` });
        expect(post).toMatchObject({ mentions: ["bob"], unreached: ["carol"] });
        expect((await instance.channel.inbox("bob")).entries.map((entry) => entry.id)).toEqual([post.id]);
        expect(await instance.channel.markSeen("bob", post.id)).toBe(post.id);
        expect(await instance.channel.ack("bob", [post.id])).toBe(1);
        const delivered = await instance.channel.deliver({ agent: "bob", text: "@alice done" });
        expect(delivered).toMatchObject({ from: "bob", notify: [{ member: "alice", agent: "alice" }] });
        expect(await instance.memberView("alice", { channel: 5, mentions: 5 })).toMatchObject({
          member: { name: "alice" },
          newest: [{ id: post.id }, { id: delivered.post.id }],
          mentions: [{ id: delivered.post.id }],
          unread: 1,
        });
        await instance.documents.write("plan.md", tag, { by: "alice" });
        const proposal = await instance.proposals.create({ title: "Merge?", by: "alice" });
        await instance.proposals.vote({ id: proposal.id, voter: "alice", option: "yes" });
        expect(await instance.proposals.vote({ id: proposal.id, voter: "bob", option: "yes" })).toMatchObject({
          status: { status: "decided", result: "yes" },
        });
      }
      const slots = new Set(
        await Promise.all(
          tags.map(async (tag) => Number(await t.redis.call("CLUSTER", "KEYSLOT", `{w:review:${tag}}`))),
        ),
      );
      expect(slots.size).toBeGreaterThan(1);
      // The ingest's check-and-append spans two slots: not on a cluster (the runner checks first there).
      const input = inbound({ agent: "bob", text: "hi", context: "review:pr-0" });
      expect(
        new RedisInbox(t.redis, { prefix: t.prefix }).appendAsMember(input, { workflow: "review", tag: "pr-0" }),
      ).toBeUndefined();
      expect((await store.list()).map((state) => state.tag)).toEqual(tags);
      for (const tag of tags) {
        const instance = store.instance("review", tag);
        await instance.stop();
        await instance.discard();
      }
      expect(await store.list()).toEqual([]);
    } finally {
      await t.cleanup();
    }
  });
});
