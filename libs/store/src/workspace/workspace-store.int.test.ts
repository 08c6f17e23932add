import { FakeClock } from "@moniro/ports/test";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { describeWorkspaceContract } from "../contract/workspace.contract.js";
import { createKeys } from "../keys.js";
import { scanKeys } from "../redis-client.js";
import { hashTagOf } from "../scripts/loader.js";
import { type TestRedis, testRedis } from "../test/redis-fixture.js";
import { RedisWorkspaceStore } from "./redis-workspace-store.js";
import type { NamedMember, Workspace } from "./workspace-port.js";

describeWorkspaceContract(" on Redis", ({ clock, limits }) => {
  const t = testRedis();
  return { store: new RedisWorkspaceStore(t.redis, { prefix: t.prefix, clock, limits }), cleanup: () => t.cleanup() };
});

const MEMBERS: NamedMember[] = [
  { name: "alice", agent: "alice", kind: "ref", role: "reviewer" },
  { name: "bob", agent: "bob", kind: "ref" },
  { name: "helper", agent: "review__main__helper", kind: "inline" },
];

// Redis-specific: the key layout, what discard leaves, many writers on their own connections.
describe("RedisWorkspaceStore on Redis", () => {
  let t: TestRedis;
  let store: RedisWorkspaceStore;
  let review: Workspace;
  beforeEach(async () => {
    t = testRedis();
    store = new RedisWorkspaceStore(t.redis, { prefix: t.prefix, clock: new FakeClock({ start: 1_732_600_000_000 }) });
    review = store.instance("review", "main");
    await review.start(MEMBERS);
  });
  afterEach(async () => {
    await t.cleanup();
  });

  it("keeps every key of an instance under its hash tag", async () => {
    await review.channel.post({ from: "alice", text: "@bob hi" });
    await review.documents.write("plan.md", "x", { by: "alice" });
    const proposal = await review.proposals.create({ title: "Ship?", by: "alice" });
    await review.proposals.vote({ id: proposal.id, voter: "bob", option: "yes" });
    await review.channel.markSeen("bob", "1-0");
    const keys: string[] = [];
    for await (const batch of scanKeys(t.redis, `${t.prefix}*`)) keys.push(...batch);
    const index = createKeys(t.prefix).workspaces;
    expect(keys).toContain(index);
    const tags = new Set(keys.filter((key) => key !== index).map(hashTagOf));
    expect(tags).toEqual(new Set(["w:review:main"]));
    expect(keys.length).toBe(11);
  });

  it("leaves no key of a discarded instance, the index entry included", async () => {
    await review.channel.post({ from: "alice", text: "@bob hi" });
    await review.documents.write("plan.md", "x", { by: "alice" });
    await review.channel.markSeen("bob", "1-0");
    await review.stop();
    await review.discard();
    const left: string[] = [];
    for await (const keys of scanKeys(t.redis, `${t.prefix}*`)) left.push(...keys);
    expect(left).toEqual([]);
  });

  it("keeps 1,000 concurrent posts from 10 members: every post, in each sender's order, every mention", async () => {
    const members = Array.from({ length: 10 }, (_, index) => ({
      name: `m${index}`,
      agent: `m${index}`,
      kind: "ref" as const,
    }));
    const busy = new RedisWorkspaceStore(t.redis, { prefix: t.prefix }).instance("busy", "main");
    await busy.start(members);
    // Ten writers on their own connections, 100 posts each, every post mentioning the next member.
    const writers = members.map(async (member, index) => {
      const connection = new RedisWorkspaceStore(t.connect(), { prefix: t.prefix }).instance("busy", "main");
      const next = members[(index + 1) % members.length]?.name;
      for (let n = 0; n < 100; n += 10) {
        await Promise.all(
          Array.from({ length: 10 }, (_, k) =>
            connection.channel.post({ from: member.name, text: `@${next} ${member.name} post ${n + k}` }),
          ),
        );
      }
    });
    await Promise.all(writers);
    expect(await busy.channel.length()).toBe(1000);
    const all = [];
    let cursor: string | undefined;
    for (;;) {
      const page = await busy.channel.read({ ...(cursor ? { after: cursor } : {}), limit: 1000 });
      if (page.entries.length === 0) break;
      all.push(...page.entries);
      cursor = page.cursor;
    }
    expect(all).toHaveLength(1000);
    for (const member of members) {
      const numbers = all
        .filter((entry) => entry.from === member.name)
        .map((entry) => Number(entry.text.split(" post ")[1]));
      expect(new Set(numbers).size, member.name).toBe(100);
      expect((await busy.channel.inbox(member.name)).unread, member.name).toBe(100);
    }
  });
});
