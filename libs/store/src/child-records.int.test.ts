import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ChildRecords } from "./child-records.js";
import { type TestRedis, testRedis } from "./test/index.js";

// A sub-agent's token use reaches its parent's figures (GET /v1/agents/:agent/children) once, whatever
// the order of its removal (the parent took a report) and a later report (on a follow-up it took), and
// however often a runner sends a report again. Real Redis, a random key prefix.

const definition = (name: string) => ({
  name,
  parent: "boss",
  callId: "call-1",
  model: "m",
  maxSteps: 10,
  wait: false,
  createdAt: 1,
});

describe("ChildRecords: the parent's figures of its ended children", () => {
  let t: TestRedis;
  let records: ChildRecords;
  beforeEach(() => {
    t = testRedis();
    records = new ChildRecords(t.redis, t.prefix);
  });
  afterEach(async () => {
    await t.cleanup();
  });

  it("a follow-up's report after the removal adds what the child spent since, once", async () => {
    await records.create(definition("kid"));
    expect(await records.recordReport("kid", "boss", "r1", { inputTokens: 100, outputTokens: 7 })).toBe("r1");
    await records.remove("kid", "boss");
    expect(await records.childUsage("boss")).toEqual({ children: 1, inputTokens: 100, outputTokens: 7 });
    // The follow-up's report, sent twice (a runner taking the child over): its growth once; the first id kept.
    expect(await records.recordReport("kid", "boss", "r2", { inputTokens: 1_100, outputTokens: 77 })).toBe("r1");
    await records.recordReport("kid", "boss", "r2", { inputTokens: 1_100, outputTokens: 77 });
    expect(await records.childUsage("boss")).toEqual({ children: 1, inputTokens: 1_100, outputTokens: 77 });
    expect((await records.get("kid"))?.status).toBe("ended");
    await records.remove("kid", "boss");
    expect(await records.childUsage("boss")).toEqual({ children: 1, inputTokens: 1_100, outputTokens: 77 });
  });

  it("a follow-up's report recorded before the removal is rolled up by the removal, once", async () => {
    await records.create(definition("kid"));
    await records.recordReport("kid", "boss", "r1", { inputTokens: 100, outputTokens: 7 });
    await records.recordReport("kid", "boss", "r2", { inputTokens: 1_100, outputTokens: 77 });
    await records.remove("kid", "boss");
    await records.recordReport("kid", "boss", "r2", { inputTokens: 1_100, outputTokens: 77 });
    expect(await records.childUsage("boss")).toEqual({ children: 1, inputTokens: 1_100, outputTokens: 77 });
    expect(await records.liveChildren("boss")).toEqual([]);
  });

  it("a canceled child stays canceled; its use is rolled up at its removal", async () => {
    await records.create(definition("kid"));
    await records.recordReport("kid", "boss", "r1", { inputTokens: 50, outputTokens: 5 });
    expect(await records.markCanceled("kid")).toBe(true);
    await records.remove("kid", "boss");
    expect((await records.get("kid"))?.status).toBe("canceled");
    expect(await records.childUsage("boss")).toEqual({ children: 1, inputTokens: 50, outputTokens: 5 });
    expect(await t.redis.ttl(`${t.prefix}{a:kid}:subagent`)).toBeGreaterThan(0);
  });
});
