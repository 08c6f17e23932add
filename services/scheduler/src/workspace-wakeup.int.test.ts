import type { InboundEnvelope } from "@moniro/envelopes";
import { RedisWorkspaceStore } from "@moniro/store";
import { type TestRedis, testRedis } from "@moniro/store/test";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { wantedSchedules } from "./definition-schedules.js";
import { createFireProcessor } from "./fire-processor.js";
import { workspaceContextsOf } from "./workspace-contexts.js";

// `schedule.workspace` over real Redis: the definition's wakeup lands in the workspace while its
// instance runs with the agent as a member, and in the personal context otherwise.
describe("a definition's wakeup with schedule.workspace", () => {
  let t: TestRedis;
  let store: RedisWorkspaceStore;
  const published: InboundEnvelope[] = [];
  let fire: ReturnType<typeof createFireProcessor>;

  beforeEach(() => {
    t = testRedis();
    store = new RedisWorkspaceStore(t.redis, { prefix: t.prefix });
    published.length = 0;
    fire = createFireProcessor({
      now: () => Date.parse("2026-03-01T08:00:00.000Z"),
      isIdle: async () => true,
      workspaceContexts: workspaceContextsOf(store),
      publishInbound: async (envelope) => {
        published.push(envelope);
      },
    });
  });
  afterEach(async () => {
    await t.cleanup();
  });

  const wakeupOf = (workspace: string) => {
    const [wanted] = wantedSchedules([{ name: "alice", schedule: { every_ms: 60_000, reason: "look", workspace } }]);
    if (!wanted) throw new Error("no wakeup");
    return wanted.data;
  };
  const alice = { name: "alice", agent: "alice", kind: "ref" } as const;

  it("review:pr-7 running with alice: the wakeup is a background input in context review:pr-7", async () => {
    await store.instance("review", "pr-7").start([alice]);
    await fire({ id: "repeat:def.alice.wakeup:1", timestamp: 1, data: wakeupOf("review:pr-7") });
    expect(published).toMatchObject([
      { agent: "alice", source: "cron:wakeup", context: "review:pr-7", priority: "background", text: "look" },
    ]);
  });

  it("not running, or alice not a member: the wakeup is personal", async () => {
    await fire({ id: "a", timestamp: 1, data: wakeupOf("review:pr-7") });
    await store.instance("review", "pr-7").start([{ name: "bob", agent: "bob", kind: "ref" }]);
    await fire({ id: "b", timestamp: 2, data: wakeupOf("review:pr-7") });
    await store.instance("review", "pr-8").start([alice]);
    await store.instance("review", "pr-8").stop();
    await fire({ id: "c", timestamp: 3, data: wakeupOf("review:pr-8") });
    expect(published.map((envelope) => envelope.context)).toEqual(["personal", "personal", "personal"]);
  });

  it("'review' alone: one wakeup per running review instance alice is in, personal when there is none", async () => {
    await fire({ id: "a", timestamp: 1, data: wakeupOf("review") });
    await store.instance("review", "main").start([alice]);
    await store.instance("review", "pr-7").start([alice]);
    await store.instance("review", "pr-9").start([{ name: "bob", agent: "bob", kind: "ref" }]);
    await store.instance("docs", "main").start([alice]);
    await fire({ id: "b", timestamp: 2, data: wakeupOf("review") });
    expect(published.map((envelope) => envelope.context)).toEqual(["personal", "review:main", "review:pr-7"]);
  });
});
