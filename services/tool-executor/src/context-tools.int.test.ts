import type { ThreadEntryData } from "@moniro/envelopes";
import { createKeys, ENTRY_FIELD, encodeThreadEntry, RedisPersonalContext } from "@moniro/store";
import { type TestRedis, testRedis } from "@moniro/store/test";
import { runTool } from "@moniro/tool-catalog";
import { testToolContext } from "@moniro/tool-catalog/test";
import { afterEach, beforeEach, describe, expect, it } from "vitest";

let t: TestRedis;
beforeEach(() => {
  t = testRedis();
});
afterEach(async () => {
  await t.cleanup();
});

// The context tools of @moniro/tool-catalog over the Redis PersonalContext the executor wires in.

/** A context over a connection of its own, as a new executor process would have. */
const freshContext = (agent = "ada") =>
  testToolContext({ personal: new RedisPersonalContext(t.connect(), { prefix: t.prefix }), agent });

describe("memory", () => {
  it("write / get / search / delete, persisting for a new connection", async () => {
    const first = freshContext();
    await runTool("memory_write", { key: "favourite-color", value: "Teal, not blue" }, first);
    await runTool("memory_write", { key: "timezone", value: "Europe/Berlin" }, first);
    expect((await runTool("memory_write", { key: "timezone", value: "Europe/Paris" }, first)).content).toContain(
      "Updated",
    );

    const second = freshContext();
    expect((await runTool("memory_get", { key: "timezone" }, second)).content).toBe("Europe/Paris");
    expect((await runTool("memory_get", {}, second)).content).toBe(
      "favourite-color: Teal, not blue\ntimezone: Europe/Paris",
    );
    const search = await runTool("memory_search", { query: "TEAL color" }, second);
    expect(search.data).toEqual({ matches: [{ key: "favourite-color", value: "Teal, not blue" }] });
    expect((await runTool("memory_search", { query: "teal berlin" }, second)).content).toContain("No memory matches");
    expect((await runTool("memory_delete", { key: "timezone" }, second)).isError).toBeUndefined();
    expect(await runTool("memory_get", { key: "timezone" }, second)).toMatchObject({
      isError: true,
      errorCode: "not-found",
      content: "No memory 'timezone'. Use memory_search to find keys.",
    });
    expect((await runTool("memory_delete", { key: "timezone" }, second)).errorCode).toBe("not-found");
    // Another agent has its own memory.
    expect((await runTool("memory_get", {}, freshContext("bob"))).content).toBe("No memories yet.");
    expect(await t.redis.hgetall(createKeys(t.prefix).memory("ada"))).toEqual({ "favourite-color": "Teal, not blue" });
  });
});

describe("memory attacks", () => {
  it("a key built like another agent's key ('}', '{a:bob}:memory', ':', '*', NUL, a newline) is a field of the caller's own memory", async () => {
    const keys = createKeys(t.prefix);
    await t.redis.hset(keys.memory("bob"), "pin", "bob's 1234");
    const ada = freshContext();
    const crafted = [
      "}:memory",
      "{a:bob}:memory",
      `${t.prefix}{a:bob}:memory`,
      "pin}",
      "*",
      "pin\u0000",
      "pin\nx",
      "p".repeat(200),
    ];
    for (const key of crafted) {
      expect((await runTool("memory_write", { key, value: "ada's" }, ada)).isError, key).toBeUndefined();
    }
    for (const key of ["pin", ...crafted]) {
      const got = await runTool("memory_get", { key }, ada);
      expect(got.content, key).not.toContain("1234");
    }
    expect((await runTool("memory_delete", { key: "pin" }, ada)).errorCode).toBe("not-found");
    expect((await runTool("memory_search", { query: "1234" }, ada)).content).toBe("No memory matches '1234'.");
    expect(await t.redis.hgetall(keys.memory("bob"))).toEqual({ pin: "bob's 1234" });
    expect(Object.keys(await t.redis.hgetall(keys.memory("ada"))).sort()).toEqual([...crafted].sort());
    // Nothing but ada's own keys was written: her memory hash and its version counter.
    const written = (await t.redis.keys(`${t.prefix}*`)).filter((key) => !key.includes("{a:bob}")).sort();
    expect(written).toEqual([keys.contextVersion("ada"), keys.memory("ada")].sort());
  });
});

describe("notes", () => {
  it("append and read newest, filtered by query, from a new connection", async () => {
    const first = freshContext();
    for (const text of ["bought milk", "meeting notes: ship v2", "called the plumber"]) {
      await runTool("note_write", { text }, first);
    }
    const second = freshContext();
    const all = await runTool("note_read", {}, second);
    expect((all.data as { notes: { text: string }[] }).notes.map((n) => n.text)).toEqual([
      "bought milk",
      "meeting notes: ship v2",
      "called the plumber",
    ]);
    const last = await runTool("note_read", { last: 1 }, second);
    expect(last.content).toMatch(/\] called the plumber$/);
    const filtered = await runTool("note_read", { query: "SHIP" }, second);
    expect((filtered.data as { notes: { text: string }[] }).notes.map((n) => n.text)).toEqual([
      "meeting notes: ship v2",
    ]);
    expect(await t.redis.type(createKeys(t.prefix).notes("ada"))).toBe("stream");
  });
});

describe("todos", () => {
  it("add / list / done, persisting for a new connection", async () => {
    const first = freshContext();
    const a = (await runTool("todo_add", { text: "write the report" }, first)).data as { id: string };
    await runTool("todo_add", { text: "water plants" }, first);
    const second = freshContext();
    expect((await runTool("todo_list", {}, second)).content).toContain(`${a.id} [ ] write the report`);
    expect((await runTool("todo_done", { id: a.id }, second)).content).toBe(`Done: ${a.id} write the report`);
    const open = (await runTool("todo_list", {}, freshContext())).data as { todos: { text: string }[] };
    expect(open.todos.map((todo) => todo.text)).toEqual(["water plants"]);
    const all = (await runTool("todo_list", { include_done: true }, second)).data as { todos: unknown[] };
    expect(all.todos).toHaveLength(2);
    expect(await runTool("todo_done", { id: "t000000" }, second)).toMatchObject({
      isError: true,
      errorCode: "not-found",
      content: "No todo 't000000'. Use todo_list to see ids.",
    });
    await runTool("memory_write", { key: "name", value: "Ada" }, second);
    expect(a.id).toBe("1");
    const snapshot = await new RedisPersonalContext(t.connect(), { prefix: t.prefix }).promptSnapshot("ada", {
      notes: 0,
    });
    expect(snapshot.memory).toEqual([{ key: "name", value: "Ada" }]);
    expect(snapshot.todos.map((todo) => [todo.id, todo.text])).toEqual([["2", "water plants"]]);
  });
});

describe("history", () => {
  async function seedThread(context: string, entries: ThreadEntryData[]): Promise<void> {
    const key = createKeys(t.prefix).thread("ada", context);
    for (const entry of entries) await t.redis.xadd(key, "*", ENTRY_FIELD, encodeThreadEntry(entry));
  }
  const base = { cycleId: "c1", ts: Date.now() };
  const input = (text: string, context = "personal"): ThreadEntryData => ({
    ...base,
    kind: "input",
    envelopeId: "01J00000000000000000000000",
    source: "http:alice",
    replyTo: "http:alice",
    context,
    lane: "immediate",
    text,
    attachments: [],
  });

  beforeEach(async () => {
    await seedThread("personal", [
      input("what is the wifi password?"),
      { ...base, kind: "assistant", step: 0, text: "looking it up", toolUses: [], stopReason: "tool_use" },
      { ...base, kind: "tool-result", callId: "x", tool: "memory_get", content: "wifi: hunter2", isError: false },
      { ...base, kind: "compaction", summary: "Alice asked about the garden party in May", upTo: "0-1" },
      { ...base, kind: "skip", reason: "spam about crypto", skippedCycleId: "c0" },
      input("thanks!"),
    ]);
    await seedThread("proj:dev", [input("deploy the wifi dashboard", "proj:dev")]);
    // Thread metadata keys beside the streams are not threads.
    await t.redis.hset(createKeys(t.prefix).threadMeta("ada", "personal"), "windowAfter", "0-1");
    await t.redis.sadd(createKeys(t.prefix).threadEnvelopes("ada", "personal"), "01J00000000000000000000000");
  });

  it("history_search finds keywords across every thread, including compacted and skipped parts", async () => {
    const ctx = freshContext();
    const wifi = await runTool("history_search", { query: "WIFI" }, ctx);
    const matches = (wifi.data as { matches: { context: string; kind: string }[] }).matches;
    expect(matches.map((m) => `${m.context}/${m.kind}`).sort()).toEqual([
      "personal/input",
      "personal/tool-result",
      "proj:dev/input",
    ]);
    expect((await runTool("history_search", { query: "garden party" }, ctx)).content).toContain("(summary)");
    expect((await runTool("history_search", { query: "crypto spam" }, ctx)).content).toContain("skipped cycle");
    const scoped = await runTool("history_search", { query: "wifi", context: "proj:dev" }, ctx);
    expect((scoped.data as { matches: unknown[] }).matches).toHaveLength(1);
    expect((await runTool("history_search", { query: "zebra" }, ctx)).content).toContain("Nothing in your history");
  });

  it("history_read returns the last N of the current thread or a time range", async () => {
    const ctx = freshContext();
    const last = await runTool("history_read", { last: 2 }, ctx);
    const lines = (last.data as { entries: { text: string }[] }).entries.map((e) => e.text);
    expect(lines).toEqual(["(skipped cycle: spam about crypto)", "[http:alice] thanks!"]);
    const other = await runTool("history_read", { context: "proj:dev" }, ctx);
    expect(other.content).toContain("deploy the wifi dashboard");
    const future = new Date(Date.now() + 3_600_000).toISOString();
    const empty = await runTool("history_read", { since: future }, ctx);
    expect(empty.content).toContain("Threads: personal, proj:dev");
    const since = await runTool(
      "history_read",
      { since: new Date(Date.now() - 3_600_000).toISOString(), last: 1 },
      ctx,
    );
    expect(since.content).toContain("what is the wifi password?");
    expect(await runTool("history_read", { since: future, until: new Date().toISOString() }, ctx)).toMatchObject({
      isError: true,
      errorCode: "invalid-input",
      content: "'since' is after 'until'; swap them.",
    });
  });

  it("history_read over a range from before 1970 reads from the first entry, and one ending before 1970 finds nothing (not Redis's 'Invalid stream ID')", async () => {
    const ctx = freshContext();
    const since = await runTool("history_read", { since: "1969-07-20T20:17:00Z", last: 1 }, ctx);
    expect(since.isError).toBeUndefined();
    expect(since.content).toContain("what is the wifi password?");
    const ancient = await runTool(
      "history_read",
      { since: "0000-01-01T00:00:00Z", until: "1900-01-01T00:00:00Z" },
      ctx,
    );
    expect(ancient).toMatchObject({
      content: "No entries in thread 'personal' for that range. Threads: personal, proj:dev.",
    });
    expect(ancient.isError).toBeUndefined();
  });

  it("attack: no context names another agent's thread (braces, globs, '..', another key's words)", async () => {
    const bobThread = createKeys(t.prefix).thread("bob", "personal");
    await t.redis.xadd(bobThread, "*", ENTRY_FIELD, encodeThreadEntry(input("bob's secret: 7431")));
    const ctx = freshContext();
    const contexts = [
      "}:thread:personal",
      "personal}",
      `{a:bob}:thread:personal`,
      `../{a:bob}:thread:personal`,
      "*",
      "personal*",
      "?ersonal",
      `${t.prefix}{a:bob}:thread:personal`,
      "personal\u0000",
      "x".repeat(10_000),
    ];
    for (const context of contexts) {
      for (const tool of ["history_read", "history_search"] as const) {
        const outcome = await runTool(tool, tool === "history_read" ? { context } : { query: "secret", context }, ctx);
        expect(outcome.content, `${tool} ${context.slice(0, 40)}`).not.toContain("7431");
      }
    }
    const everywhere = await runTool("history_search", { query: "secret" }, ctx);
    expect(everywhere.content).toBe("Nothing in your history matches 'secret'.");
    // bob's thread is as it was.
    expect(await t.redis.xlen(bobThread)).toBe(1);
  });
});
