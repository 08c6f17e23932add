import { inbound } from "@moniro/ports/test";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createKeys } from "./keys.js";
import { RedisInbox } from "./redis-inbox.js";
import { type TestRedis, testRedis } from "./test/redis-fixture.js";
import { RedisWorkspaceStore } from "./workspace/redis-workspace-store.js";

// The ingest's membership check and the append in one script (single Redis).
describe("RedisInbox.appendAsMember", () => {
  let t: TestRedis;
  let inbox: RedisInbox;
  const review = { workflow: "review", tag: "main" };
  beforeEach(async () => {
    t = testRedis();
    inbox = new RedisInbox(t.redis, { prefix: t.prefix });
    await new RedisWorkspaceStore(t.redis, { prefix: t.prefix }).instance("review", "main").start([
      { name: "ada", agent: "ada", kind: "ref" },
      { name: "helper", agent: "review__main__helper", kind: "inline" },
    ]);
  });
  afterEach(async () => {
    await t.cleanup();
  });

  it("appends the input of a member (an inline one under its agent name) once, into the pending index", async () => {
    const first = inbound({ agent: "ada", text: "@ada look", context: "review:main" });
    expect(await inbox.appendAsMember(first, review)).toEqual({ duplicate: false });
    expect(await inbox.appendAsMember(first, review)).toEqual({ duplicate: true });
    const helper = inbound({ agent: "review__main__helper", text: "go", context: "review:main" });
    expect(await inbox.appendAsMember(helper, review)).toEqual({ duplicate: false });
    expect((await inbox.pending("ada")).map((item) => item.envelope.id)).toEqual([first.id]);
    expect((await inbox.pending("review__main__helper")).map((item) => item.envelope.text)).toEqual(["go"]);
    expect((await t.redis.smembers(createKeys(t.prefix).pendingAgents)).sort()).toEqual([
      "ada",
      "review__main__helper",
    ]);
  });

  it("writes nothing for an agent that plays no member, or when the instance is not running", async () => {
    const carl = inbound({ agent: "carl", text: "join", context: "review:main" });
    expect(await inbox.appendAsMember(carl, review)).toEqual({ refused: "not_a_participant" });
    const docs = inbound({ agent: "ada", text: "docs?", context: "docs:main" });
    expect(await inbox.appendAsMember(docs, { workflow: "docs", tag: "main" })).toEqual({
      refused: "workflow_not_running",
    });
    expect(await inbox.pending("carl")).toEqual([]);
    expect(await inbox.pending("ada")).toEqual([]);
    expect(await t.redis.smembers(createKeys(t.prefix).pendingAgents)).toEqual([]);
    // A refused id is not remembered (no dedupe entry): once carl is a member, the same input is taken.
    const instance = new RedisWorkspaceStore(t.redis, { prefix: t.prefix }).instance("review", "main");
    await instance.stop();
    await instance.start([{ name: "carl", agent: "carl", kind: "ref" }]);
    expect(await inbox.appendAsMember(carl, review)).toEqual({ duplicate: false });
  });
});
