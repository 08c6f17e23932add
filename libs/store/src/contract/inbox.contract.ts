import { type Fence, type Inbox, type Lease, LeaseLostError } from "@moniro/ports";
import type { FakeClock } from "@moniro/ports/test";
import { inbound, sequentialIds } from "@moniro/ports/test";
import { afterEach, beforeEach, describe, expect, it } from "vitest";

export interface InboxHarness {
  inbox: Inbox;
  /** The lease re-queues are fenced by (the same agent keys as the inbox). */
  lease: Lease;
  /** The clock the inbox stamps `enqueuedAt` with. */
  clock: FakeClock;
  /** The same inbox as seen by another runner (a new adapter instance on a new connection). */
  reopen(): Inbox;
  cleanup?(): Promise<void>;
}

/** The Inbox port's behaviour, for the in-memory fake and the Redis adapter alike. */
export function describeInboxContract(name: string, factory: () => Promise<InboxHarness> | InboxHarness): void {
  describe(`Inbox contract: ${name}`, () => {
    let h: InboxHarness;
    const ids = sequentialIds(1_000);
    const envelope = (text: string, fields: Parameters<typeof inbound>[0] extends infer F ? Partial<F> : never = {}) =>
      inbound({ ...fields, text }, { ids });

    let fence: Fence | undefined;
    /** Ada's lease, taken once per test (as the loop's runner holds it). */
    const held = async (): Promise<Fence> => {
      fence ??= (await h.lease.acquire("ada", "runner-1", 60_000)) ?? undefined;
      if (!fence) throw new Error("the lease was not acquired");
      return fence;
    };
    beforeEach(async () => {
      h = await factory();
      fence = undefined;
    });
    afterEach(async () => {
      await h.cleanup?.();
    });

    it("returns pending input lane by lane (immediate, normal, background), FIFO within a lane", async () => {
      await h.inbox.append(envelope("b1", { source: "cron:daily" }));
      // A direct send into a workspace (a person, in a workspace context) is normal by default.
      await h.inbox.append(envelope("n1", { source: "http:carol", context: "flow:chat" }));
      await h.inbox.append(envelope("i1", { source: "http:alice" }));
      await h.inbox.append(envelope("b2", { source: "cron:daily" }));
      await h.inbox.append(envelope("i2", { source: "signal:+15551234567" }));
      await h.inbox.append(envelope("n2", { source: "http:bob", priority: "normal" }));
      const pending = await h.inbox.pending("ada");
      expect(pending.map((item) => item.envelope.text)).toEqual(["i1", "i2", "n1", "n2", "b1", "b2"]);
      expect(pending.map((item) => item.lane)).toEqual([
        "immediate",
        "immediate",
        "normal",
        "normal",
        "background",
        "background",
      ]);
      expect(new Set(pending.map((item) => `${item.lane}/${item.entryId}`)).size).toBe(6);
      expect(await h.inbox.depth("ada")).toEqual({ immediate: 2, normal: 2, background: 2 });
    });

    it("keeps the envelope whole and stamps enqueuedAt and preemptions", async () => {
      const sent = envelope("with everything", {
        source: "signal:group:abc",
        context: "flow:chat",
        replyTo: "signal:+15550000000",
        attachments: [{ name: "a.txt", contentType: "text/plain", data: "aGk=", size: 2 }],
        meta: { nested: { value: [1, "two"] } },
      });
      h.clock.set(Date.UTC(2025, 0, 2));
      await h.inbox.append(sent);
      await h.inbox.append(envelope("aged"), { lane: "background", enqueuedAt: 5, preemptions: 2 });
      const [first, second] = await h.inbox.pending("ada");
      expect(first).toMatchObject({
        lane: "normal",
        envelope: sent,
        enqueuedAt: Date.UTC(2025, 0, 2),
        preemptions: 0,
      });
      expect(second).toMatchObject({ lane: "background", enqueuedAt: 5, preemptions: 2 });
    });

    it("appends an envelope id once: a duplicate is reported and not queued, even after the first was acked", async () => {
      const sent = envelope("once");
      expect(await h.inbox.append(sent)).toEqual({ duplicate: false });
      expect(await h.inbox.append(sent)).toEqual({ duplicate: true });
      expect(await h.inbox.append({ ...sent, text: "same id, other text" })).toEqual({ duplicate: true });
      const pending = await h.inbox.pending("ada");
      expect(pending.map((item) => item.envelope.text)).toEqual(["once"]);
      await h.inbox.ack("ada", pending);
      expect(await h.inbox.append(sent)).toEqual({ duplicate: true });
      expect(await h.inbox.pending("ada")).toEqual([]);
    });

    it("discard removes items moved to the DLQ and forgets their ids: a replay of one is queued, the others stay duplicates", async () => {
      const moved = envelope("moved to the DLQ");
      const kept = envelope("handled");
      await h.inbox.append(moved);
      await h.inbox.append(kept);
      const [first, second] = await h.inbox.pending("ada");
      if (!first || !second) throw new Error("expected two items");
      await h.inbox.ack("ada", [second]);
      await h.inbox.discard("ada", [first]);
      expect(await h.inbox.pending("ada")).toEqual([]);
      expect(await h.inbox.agentsWithPending()).toEqual([]);
      // The DLQ replay publishes the same envelope (same id) again.
      expect(await h.inbox.append(moved)).toEqual({ duplicate: false });
      expect(await h.inbox.append(moved)).toEqual({ duplicate: true });
      expect(await h.inbox.append(kept)).toEqual({ duplicate: true });
      expect((await h.inbox.pending("ada")).map((item) => item.envelope.text)).toEqual(["moved to the DLQ"]);
      await h.inbox.discard("ada", []);
    });

    it("ack removes exactly the acked items; the agent leaves the pending set when every lane is empty", async () => {
      await h.inbox.append(envelope("i1"));
      await h.inbox.append(envelope("i2"));
      await h.inbox.append(envelope("b1", { source: "cron:daily" }));
      await h.inbox.append(envelope("other agent", { agent: "bob" }));
      const [i1, i2, b1] = await h.inbox.pending("ada");
      if (!i1 || !i2 || !b1) throw new Error("expected three items");
      await h.inbox.ack("ada", [i2]);
      expect((await h.inbox.pending("ada")).map((item) => item.envelope.text)).toEqual(["i1", "b1"]);
      expect(await h.inbox.agentsWithPending()).toEqual(["ada", "bob"]);
      await h.inbox.ack("ada", [i1, b1]);
      expect(await h.inbox.pending("ada")).toEqual([]);
      expect(await h.inbox.depth("ada")).toEqual({ immediate: 0, normal: 0, background: 0 });
      expect(await h.inbox.agentsWithPending()).toEqual(["bob"]);
      expect((await h.inbox.pending("bob")).map((item) => item.envelope.text)).toEqual(["other agent"]);
      await h.inbox.ack("ada", [i1]);
      await h.inbox.ack("ada", []);
      expect(await h.inbox.agentsWithPending()).toEqual(["bob"]);
    });

    it("keeps read but unacknowledged items for a runner that takes over (a new instance)", async () => {
      await h.inbox.append(envelope("read, never acked"));
      const firstRead = await h.inbox.pending("ada");
      expect(firstRead.map((item) => item.envelope.text)).toEqual(["read, never acked"]);
      await h.inbox.append(envelope("never read", { source: "cron:daily" }));
      await h.inbox.append(envelope("arrived later"));
      const successor = h.reopen();
      const seen = await successor.pending("ada");
      expect(seen.map((item) => item.envelope.text)).toEqual(["read, never acked", "arrived later", "never read"]);
      expect(seen[0]?.entryId).toBe(firstRead[0]?.entryId);
      expect(await successor.pending("ada")).toEqual(seen);
      await successor.ack("ada", seen);
      expect(await h.inbox.pending("ada")).toEqual([]);
      expect(await successor.agentsWithPending()).toEqual([]);
    });

    it("requeue moves an item to the back of its lane, keeping enqueuedAt, and acks the old entry", async () => {
      h.clock.set(Date.UTC(2025, 0, 3));
      const enqueuedAt = h.clock.now();
      await h.inbox.append(envelope("first"));
      await h.inbox.append(envelope("second"));
      const [first] = await h.inbox.pending("ada");
      if (!first) throw new Error("expected an item");
      h.clock.advance(60_000);
      const requeued = await h.inbox.requeue(await held(), first, { preemptions: 1 });
      expect(requeued).toMatchObject({ lane: "immediate", enqueuedAt, preemptions: 1, envelope: first.envelope });
      expect(requeued.entryId).not.toBe(first.entryId);
      const pending = await h.inbox.pending("ada");
      expect(pending.map((item) => item.envelope.text)).toEqual(["second", "first"]);
      expect(pending[1]).toEqual(requeued);
      const moved = await h.inbox.requeue(await held(), requeued, { lane: "normal", preemptions: 3 });
      expect(moved).toMatchObject({ lane: "normal", enqueuedAt, preemptions: 3 });
      expect(await h.inbox.depth("ada")).toEqual({ immediate: 1, normal: 1, background: 0 });
      expect(await h.reopen().pending("ada")).toEqual(await h.inbox.pending("ada"));
    });

    it("requeue of an item already acknowledged adds it again (an instruction resumed later)", async () => {
      await h.inbox.append(envelope("handled"));
      const [item] = await h.inbox.pending("ada");
      if (!item) throw new Error("expected an item");
      await h.inbox.ack("ada", [item]);
      expect(await h.inbox.agentsWithPending()).toEqual([]);
      const requeued = await h.inbox.requeue(await held(), item, { preemptions: item.preemptions + 1 });
      expect((await h.inbox.pending("ada")).map((entry) => entry.entryId)).toEqual([requeued.entryId]);
      expect(await h.inbox.agentsWithPending()).toEqual(["ada"]);
    });

    it("a requeue under a lost lease writes nothing and rejects with LeaseLostError", async () => {
      await h.inbox.append(envelope("set aside"));
      const [item] = await h.inbox.pending("ada");
      if (!item) throw new Error("expected an item");
      const stale = await held();
      await h.lease.release(stale);
      const successor = await h.lease.acquire("ada", "runner-2", 60_000);
      expect(successor?.epoch).toBeGreaterThan(stale.epoch);
      await expect(h.inbox.requeue(stale, item, { preemptions: 1 })).rejects.toBeInstanceOf(LeaseLostError);
      expect(await h.inbox.pending("ada")).toEqual([item]);
    });

    it("keeps the traceparent an input was appended with, across re-queues and runners", async () => {
      const traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
      await h.inbox.append(envelope("traced"), { traceparent });
      await h.inbox.append(envelope("untraced"));
      const [traced, untraced] = await h.inbox.pending("ada");
      expect(traced?.traceparent).toBe(traceparent);
      expect(untraced?.traceparent).toBeUndefined();
      if (!traced) throw new Error("expected an item");
      const requeued = await h.inbox.requeue(await held(), traced, { preemptions: 1 });
      expect(requeued.traceparent).toBe(traceparent);
      expect((await h.reopen().pending("ada")).map((item) => item.traceparent)).toEqual([undefined, traceparent]);
    });
  });
}
