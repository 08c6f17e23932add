import type { InputEntry, ThreadEntryData } from "@moniro/envelopes";
import type { AgentStateStore, Inbox, Lease, ThreadStore } from "@moniro/ports";
import { LeaseLostError } from "@moniro/ports";
import { inbound } from "@moniro/ports/test";
import { afterEach, beforeEach, describe, expect, it } from "vitest";

export interface ThreadStoreHarness {
  threads: ThreadStore;
  /** The lease the store's fence check reads. */
  lease: Lease;
  /** The agent state the store's appends patch (`ThreadAppendOptions.state`). */
  state: AgentStateStore & { activeAgents(): Promise<string[]> };
  /** The inbox the store's appends acknowledge entries of (`ThreadAppendOptions.ack`). */
  inbox: Inbox & { agentsWithPending(): Promise<string[]> };
  passTime(ms: number): Promise<void>;
  cleanup?(): Promise<void>;
}

const input = (envelopeId: string, text: string, cycleId = "c1"): InputEntry => ({
  kind: "input",
  envelopeId,
  source: "http:alice",
  replyTo: "http:alice",
  context: "personal",
  lane: "immediate",
  text,
  attachments: [],
  cycleId,
  ts: 1,
});

const assistant = (text: string, step = 0): ThreadEntryData => ({
  kind: "assistant",
  cycleId: "c1",
  ts: 2,
  step,
  text,
  toolUses: [{ id: "toolu_1", name: "message", input: { text: "hi", nested: { a: [1] } } }],
  stopReason: "tool_use",
  usage: { inputTokens: 10, outputTokens: 3 },
});

const result = (callId: string): ThreadEntryData => ({
  kind: "tool-result",
  cycleId: "c1",
  ts: 3,
  callId,
  tool: "message",
  content: "sent",
  isError: false,
});

/** The ThreadStore port's behaviour, for the in-memory fake and the Redis adapter alike. */
export function describeThreadStoreContract(
  name: string,
  factory: () => Promise<ThreadStoreHarness> | ThreadStoreHarness,
): void {
  describe(`ThreadStore contract: ${name}`, () => {
    let h: ThreadStoreHarness;
    beforeEach(async () => {
      h = await factory();
    });
    afterEach(async () => {
      await h.cleanup?.();
    });

    async function acquire(holder = "r1", ttlMs = 10_000) {
      const fence = await h.lease.acquire("ada", holder, ttlMs);
      if (!fence) throw new Error("expected the lease");
      return fence;
    }

    it("appends entries in order with increasing ids and reads them back unchanged", async () => {
      const fence = await acquire();
      const entries = [input("E1", "hello"), assistant("thinking"), result("toolu_1")];
      const stored = await h.threads.append(fence, "personal", entries);
      expect(stored.map(({ entryId: _, ...data }) => data)).toEqual(entries);
      const read = await h.threads.read("ada", "personal");
      expect(read).toEqual(stored);
      const more = await h.threads.append(fence, "personal", [assistant("more", 1)]);
      expect((await h.threads.read("ada", "personal")).map((entry) => entry.entryId)).toEqual([
        ...stored.map((entry) => entry.entryId),
        more[0]?.entryId,
      ]);
      expect(await h.threads.append(fence, "personal", [])).toEqual([]);
      expect(await h.threads.read("ada", "flow:chat")).toEqual([]);
    });

    it("reads after an entry id (exclusive), the first N, or the last N", async () => {
      const fence = await acquire();
      const stored = await h.threads.append(fence, "personal", [
        input("E1", "one"),
        input("E2", "two"),
        input("E3", "three"),
        input("E4", "four"),
      ]);
      const idsOf = (entries: ReadonlyArray<{ entryId: string }>) => entries.map((entry) => entry.entryId);
      const all = idsOf(stored);
      expect(idsOf(await h.threads.read("ada", "personal", { after: all[1] }))).toEqual(all.slice(2));
      expect(idsOf(await h.threads.read("ada", "personal", { limit: 2 }))).toEqual(all.slice(0, 2));
      expect(idsOf(await h.threads.read("ada", "personal", { limit: 2, last: true }))).toEqual(all.slice(2));
      expect(idsOf(await h.threads.read("ada", "personal", { after: all[0], limit: 1 }))).toEqual([all[1]]);
      expect(idsOf(await h.threads.read("ada", "personal", { after: all[3] }))).toEqual([]);
    });

    it("knows which envelope ids each thread holds", async () => {
      const fence = await acquire();
      await h.threads.append(fence, "personal", [input("E1", "hello"), assistant("x")]);
      await h.threads.append(fence, "flow:chat", [{ ...input("E2", "ws"), context: "flow:chat" }]);
      expect(await h.threads.hasEnvelope("ada", "personal", "E1")).toBe(true);
      expect(await h.threads.hasEnvelope("ada", "personal", "E2")).toBe(false);
      expect(await h.threads.hasEnvelope("ada", "flow:chat", "E2")).toBe(true);
      expect(await h.threads.hasEnvelope("bob", "personal", "E1")).toBe(false);
    });

    it("records every envelope id of a batched input, and skips it only when the thread holds them all", async () => {
      const fence = await acquire();
      const batched = (id: string, more: string[], text: string) => ({ ...input(id, text), batched: more });
      const written = await h.threads.append(fence, "personal", [batched("V1", ["V2"], "two votes")]);
      expect(written).toHaveLength(1);
      expect(await h.threads.hasEnvelope("ada", "personal", "V2")).toBe(true);
      expect(await h.threads.append(fence, "personal", [batched("V2", ["V1"], "again")])).toEqual([]);
      expect(await h.threads.append(fence, "personal", [input("V2", "one of them alone")])).toEqual([]);
      const third = await h.threads.append(fence, "personal", [batched("V1", ["V3"], "a new vote with an old one")]);
      expect(third.map((entry) => (entry.kind === "input" ? entry.batched : []))).toEqual([["V3"]]);
      expect(
        (await h.threads.read("ada", "personal")).map((entry) => (entry.kind === "input" ? entry.text : "")),
      ).toEqual(["two votes", "a new vote with an old one"]);
    });

    it("skips an input whose envelope id the thread already holds, within a batch and across appends", async () => {
      const fence = await acquire();
      const first = await h.threads.append(fence, "personal", [input("E1", "once"), input("E1", "again in the batch")]);
      expect(first.map((entry) => (entry.kind === "input" ? entry.text : ""))).toEqual(["once"]);
      const later = await h.threads.append(fence, "personal", [input("E1", "redelivered"), assistant("reply")]);
      expect(later.map((entry) => entry.kind)).toEqual(["assistant"]);
      expect(
        (await h.threads.read("ada", "personal")).map((entry) => (entry.kind === "input" ? entry.text : entry.kind)),
      ).toEqual(["once", "assistant"]);
      // Another thread of the same agent is its own: the same envelope id is new there.
      expect(await h.threads.append(fence, "flow:chat", [{ ...input("E1", "ws"), context: "flow:chat" }])).toHaveLength(
        1,
      );
    });

    it("records the envelope a tool result carries with it: that envelope is then skipped as an input", async () => {
      const fence = await acquire();
      const carrying = (callId: string): ThreadEntryData => ({
        kind: "tool-result",
        cycleId: "c1",
        ts: 3,
        callId,
        tool: "subagent",
        content: "[agent:x] the report",
        isError: false,
        delivers: "R1",
      });
      expect(await h.threads.append(fence, "personal", [assistant("x"), carrying("toolu_1")])).toHaveLength(2);
      expect(await h.threads.hasEnvelope("ada", "personal", "R1")).toBe(true);
      expect(await h.threads.append(fence, "personal", [input("R1", "the report again")])).toEqual([]);
      // The result is written even when its envelope is already in the thread: a call always gets its result.
      expect(await h.threads.append(fence, "personal", [carrying("toolu_2")])).toHaveLength(1);
    });

    it("reads the window: everything until a compaction, then only what follows its upTo", async () => {
      const fence = await acquire();
      const old = await h.threads.append(fence, "personal", [input("E1", "old"), assistant("old reply")]);
      const idsOf = (entries: ReadonlyArray<{ entryId: string }>) => entries.map((entry) => entry.entryId);
      expect(idsOf(await h.threads.read("ada", "personal", { window: true }))).toEqual(idsOf(old));
      const kept = await h.threads.append(fence, "personal", [input("E2", "kept"), assistant("kept reply", 1)]);
      const upTo = old.at(-1)?.entryId ?? "";
      const compaction = await h.threads.append(fence, "personal", [
        { kind: "compaction", cycleId: "c2", ts: 5, summary: "E1 was about old things", upTo },
      ]);
      const after = await h.threads.append(fence, "personal", [input("E3", "new")]);
      expect(idsOf(await h.threads.read("ada", "personal", { window: true }))).toEqual(
        idsOf([...kept, ...compaction, ...after]),
      );
      // The full history is still there for recall, and dedupe still sees inputs before the window.
      expect(await h.threads.read("ada", "personal")).toHaveLength(6);
      expect(await h.threads.append(fence, "personal", [input("E1", "redelivered")])).toEqual([]);
    });

    it("rejects an append under a stale epoch with LeaseLostError and writes nothing", async () => {
      const stale = await acquire("r1", 100);
      await h.threads.append(stale, "personal", [input("E1", "before")]);
      await h.passTime(250);
      const current = await acquire("r2");
      expect(current.epoch).toBeGreaterThan(stale.epoch);
      const error = await h.threads.append(stale, "personal", [input("E2", "stale write")]).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(LeaseLostError);
      expect(error).toMatchObject({ code: "lease_lost", details: { agent: "ada", epoch: stale.epoch } });
      expect(await h.threads.hasEnvelope("ada", "personal", "E2")).toBe(false);
      await h.threads.append(current, "personal", [input("E3", "after")]);
      expect(
        (await h.threads.read("ada", "personal")).map((entry) => (entry.kind === "input" ? entry.text : "")),
      ).toEqual(["before", "after"]);
    });

    it("writes a state patch with the entries, under the same fence: a stale fence writes neither", async () => {
      const fence = await acquire("r1");
      await h.state.update("ada", { state: "running", cycleId: "c1", step: 1, error: "old" });
      const [written] = await h.threads.append(fence, "personal", [assistant("step two", 1)], {
        state: { step: 2, error: undefined },
      });
      expect(written?.entryId).toEqual(expect.any(String));
      expect(await h.state.get("ada")).toMatchObject({ state: "running", cycleId: "c1", step: 2 });
      expect((await h.state.get("ada"))?.error).toBeUndefined();
      await h.lease.release(fence);
      await expect(
        h.threads.append(fence, "personal", [assistant("late", 2)], { state: { step: 3 } }),
      ).rejects.toBeInstanceOf(LeaseLostError);
      expect(await h.state.get("ada")).toMatchObject({ state: "running", step: 2 });
      expect((await h.threads.read("ada", "personal")).map((entry) => entry.kind)).toEqual(["assistant"]);
    });

    it("keeps the active-agents index when the state patch it writes changes the state", async () => {
      const fence = await acquire("r1");
      await h.state.update("ada", { state: "idle" });
      expect(await h.state.activeAgents()).not.toContain("ada");
      await h.threads.append(fence, "personal", [input("E1", "go")], {
        state: { state: "running", cycleId: "c1", step: 1, context: "personal" },
      });
      expect(await h.state.get("ada")).toMatchObject({ state: "running", cycleId: "c1", step: 1, context: "personal" });
      expect(await h.state.activeAgents()).toContain("ada");
    });

    it("acknowledges inbox entries with the inputs, under the same fence: a stale fence acks nothing", async () => {
      const fence = await acquire("r1");
      for (const text of ["one", "two", "three"]) await h.inbox.append(inbound({ text }));
      const [one, two, three] = await h.inbox.pending("ada");
      if (!one || !two || !three) throw new Error("expected three pending items");
      await h.threads.append(fence, "personal", [input(one.envelope.id, "one")], { ack: [one, two] });
      expect((await h.inbox.pending("ada")).map((item) => item.envelope.text)).toEqual(["three"]);
      expect(await h.inbox.agentsWithPending()).toContain("ada");
      await h.lease.release(fence);
      await expect(
        h.threads.append(fence, "personal", [input(three.envelope.id, "three")], { ack: [three] }),
      ).rejects.toBeInstanceOf(LeaseLostError);
      expect((await h.inbox.pending("ada")).map((item) => item.envelope.text)).toEqual(["three"]);
      // The last ack empties the inbox: the agent leaves the pending-agents index.
      const next = await acquire("r2");
      await h.threads.append(next, "personal", [input(three.envelope.id, "three")], { ack: [three] });
      expect(await h.inbox.pending("ada")).toEqual([]);
      expect(await h.inbox.agentsWithPending()).not.toContain("ada");
    });

    const IDLE = { state: "idle", cycleId: undefined, step: undefined, context: undefined } as const;

    async function running() {
      const fence = await acquire("r1");
      await h.state.update("ada", { state: "running", cycleId: "c1", step: 1, holder: "r1", context: "personal" });
      return fence;
    }

    it("appendAndRelease with an empty inbox: appends, writes the idle record and releases the lease at once", async () => {
      const fence = await running();
      const { entries, released } = await h.threads.appendAndRelease(fence, "personal", [result("toolu_1")], IDLE);
      expect(released).toBe(true);
      expect(entries).toEqual([{ ...result("toolu_1"), entryId: expect.any(String) }]);
      expect(await h.threads.read("ada", "personal")).toEqual(entries);
      expect(await h.lease.current("ada")).toBeNull();
      expect(await h.state.get("ada")).toMatchObject({ state: "idle", holder: "r1" });
      expect((await h.state.get("ada"))?.cycleId).toBeUndefined();
      expect(await h.state.activeAgents()).not.toContain("ada");
      // Released: the next producer's lease attempt succeeds with a higher epoch.
      expect((await h.lease.acquire("ada", "r2", 10_000))?.epoch).toBe(fence.epoch + 1);
    });

    it("appendAndRelease with input waiting: appends only, keeps the lease and the record, and says so", async () => {
      const fence = await running();
      await h.inbox.append(inbound({ text: "landed meanwhile" }));
      const { entries, released } = await h.threads.appendAndRelease(fence, "personal", [result("toolu_1")], IDLE);
      expect(released).toBe(false);
      expect((await h.threads.read("ada", "personal")).map((entry) => entry.entryId)).toEqual(
        entries.map((entry) => entry.entryId),
      );
      expect(await h.lease.current("ada")).toEqual({ holder: "r1", epoch: fence.epoch });
      expect(await h.state.get("ada")).toMatchObject({ state: "running", cycleId: "c1", step: 1 });
      expect(await h.state.activeAgents()).toContain("ada");
      // The input is still there for the run that goes on; once handled, the run can end.
      const [item] = await h.inbox.pending("ada");
      expect(item?.envelope.text).toBe("landed meanwhile");
      await h.threads.append(fence, "personal", [input(item?.envelope.id ?? "", "landed meanwhile")], {
        ack: item ? [item] : [],
      });
      expect((await h.threads.appendAndRelease(fence, "personal", [], IDLE)).released).toBe(true);
      expect(await h.lease.current("ada")).toBeNull();
    });

    it("appendAndRelease under a stale fence writes nothing and leaves the successor's lease and record", async () => {
      const fence = await running();
      await h.lease.release(fence);
      const successor = await acquire("r2");
      await h.state.update("ada", { state: "running", holder: "r2" });
      await expect(h.threads.appendAndRelease(fence, "personal", [result("toolu_1")], IDLE)).rejects.toBeInstanceOf(
        LeaseLostError,
      );
      expect(await h.threads.read("ada", "personal")).toEqual([]);
      expect(await h.lease.current("ada")).toEqual({ holder: "r2", epoch: successor.epoch });
      expect(await h.state.get("ada")).toMatchObject({ state: "running", holder: "r2" });
    });

    it("rejects an append once the lease was released or taken by another holder", async () => {
      const fence = await acquire("r1");
      await h.lease.release(fence);
      await expect(h.threads.append(fence, "personal", [input("E1", "late")])).rejects.toBeInstanceOf(LeaseLostError);
      await acquire("r2");
      await expect(h.threads.append({ ...fence, epoch: fence.epoch + 1 }, "personal", [])).rejects.toBeInstanceOf(
        LeaseLostError,
      );
      expect(await h.threads.read("ada", "personal")).toEqual([]);
    });

    it("reads the tail after an entry, for the lease holder only, and says when that entry is gone", async () => {
      const fence = await acquire("r1");
      const stored = await h.threads.append(fence, "personal", [
        input("E1", "one"),
        assistant("a"),
        input("E2", "two"),
      ]);
      const [first, second, third] = stored.map((entry) => entry.entryId) as [string, string, string];
      expect(await h.threads.readTail("ada", "personal", first)).toEqual({ status: "ok", entries: stored.slice(1) });
      expect(await h.threads.readTail("ada", "personal", second, "r1")).toEqual({
        status: "ok",
        entries: stored.slice(2),
      });
      expect(await h.threads.readTail("ada", "personal", third, "r1")).toEqual({ status: "ok", entries: [] });
      expect(await h.threads.readTail("ada", "personal", first, "r2")).toEqual({ status: "not-held" });
      // An id the thread never held (or no longer holds): the reader's copy is stale.
      expect(await h.threads.readTail("ada", "personal", "1-999")).toEqual({ status: "gone" });
      expect(await h.threads.readTail("ada", "flow:chat", first)).toEqual({ status: "gone" });
      await h.lease.release(fence);
      expect(await h.threads.readTail("ada", "personal", first, "r1")).toEqual({ status: "not-held" });
    });

    it("reads ahead only for the lease holder: the window or the newest entries, else null", async () => {
      const fence = await acquire("r1");
      await h.threads.append(fence, "personal", [input("E1", "one"), assistant("a"), input("E2", "two")]);
      const all = await h.threads.read("ada", "personal");
      expect(await h.threads.readIfHeld("ada", "personal", "r1", { window: true })).toEqual(all);
      expect(await h.threads.readIfHeld("ada", "personal", "r1", { last: true, limit: 2 })).toEqual(all.slice(1));
      expect(await h.threads.readIfHeld("ada", "personal", "r2", { window: true })).toBeNull();
      await h.lease.release(fence);
      expect(await h.threads.readIfHeld("ada", "personal", "r1", { window: true })).toBeNull();
      await acquire("r2");
      expect(await h.threads.readIfHeld("ada", "personal", "r2", { last: true, limit: 5 })).toEqual(all);
      expect(await h.threads.readIfHeld("ada", "personal", "r1", { last: true, limit: 5 })).toBeNull();
      // Holder ids are compared whole, colons and all.
      expect(await h.threads.readIfHeld("ada", "personal", "2", { window: true })).toBeNull();
    });
  });
}
