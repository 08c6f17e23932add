import type { ThreadEntryData } from "@moniro/envelopes";
import type { AgentStateStore, Inbox, Lease, RunEnd, ThreadStore } from "@moniro/ports";
import { LeaseLostError } from "@moniro/ports";
import type { FakeClock } from "@moniro/ports/test";
import { inbound, sequentialIds } from "@moniro/ports/test";
import { afterEach, beforeEach, describe, expect, it } from "vitest";

export interface RunEndHarness {
  runEnd: RunEnd;
  lease: Lease;
  inbox: Inbox;
  state: AgentStateStore;
  /** The thread store `appendAndReleaseIfIdle` writes through. */
  threads: ThreadStore;
  clock: FakeClock;
  cleanup?(): Promise<void>;
}

const IDLE = { state: "idle", cycleId: undefined, step: undefined, context: undefined } as const;

const finalResult: ThreadEntryData = {
  kind: "tool-result",
  cycleId: "c1",
  ts: 3,
  callId: "toolu_1",
  tool: "message",
  content: "sent",
  isError: false,
  endsTurn: true,
};

/** The RunEnd port's behaviour, for the in-memory fake and the Redis adapter alike. */
export function describeRunEndContract(name: string, factory: () => Promise<RunEndHarness> | RunEndHarness): void {
  describe(`RunEnd contract: ${name}`, () => {
    let h: RunEndHarness;
    const ids = sequentialIds(5_000);
    beforeEach(async () => {
      h = await factory();
    });
    afterEach(async () => {
      await h.cleanup?.();
    });

    async function running() {
      const fence = await h.lease.acquire("ada", "r1", 60_000);
      if (!fence) throw new Error("expected the lease");
      await h.state.update("ada", { state: "running", cycleId: "c1", step: 2, holder: "r1", context: "personal" });
      return fence;
    }

    it("with an empty inbox: patches the state and releases the lease in one step", async () => {
      h.clock.set(Date.UTC(2025, 0, 7));
      const fence = await running();
      expect(await h.runEnd.releaseIfIdle(fence, IDLE)).toBe("released");
      expect(await h.lease.current("ada")).toBeNull();
      expect(await h.state.get("ada")).toEqual({
        state: "idle",
        holder: "r1",
        restarts: 0,
        updatedAt: Date.UTC(2025, 0, 7),
      });
      // Released: a producer's lease attempt now succeeds with a higher epoch.
      expect((await h.lease.acquire("ada", "r2", 60_000))?.epoch).toBe(fence.epoch + 1);
    });

    it("with input waiting (new or read and not acked): changes nothing and says pending", async () => {
      const fence = await running();
      await h.inbox.append(inbound({ text: "late", agent: "ada" }, { ids }));
      expect(await h.runEnd.releaseIfIdle(fence, IDLE)).toBe("pending");
      expect(await h.lease.current("ada")).toEqual({ holder: "r1", epoch: fence.epoch });
      expect((await h.state.get("ada"))?.state).toBe("running");
      // Read by the loop but not yet acked still counts as pending.
      const items = await h.inbox.pending("ada");
      expect(items).toHaveLength(1);
      expect(await h.runEnd.releaseIfIdle(fence, IDLE)).toBe("pending");
      await h.inbox.ack("ada", items);
      expect(await h.runEnd.releaseIfIdle(fence, IDLE)).toBe("released");
    });

    it("appendAndReleaseIfIdle writes the entries and, with the inbox empty, ends the run in the same step", async () => {
      const fence = await running();
      const write = h.runEnd.appendAndReleaseIfIdle?.bind(h.runEnd);
      if (!write) throw new Error("expected appendAndReleaseIfIdle");
      const ended = await write(fence, IDLE, { context: "personal", entries: [finalResult] });
      expect(ended).toEqual({ outcome: "released", entries: [{ ...finalResult, entryId: expect.any(String) }] });
      expect(await h.threads.read("ada", "personal")).toEqual(ended.entries);
      expect(await h.lease.current("ada")).toBeNull();
      expect((await h.state.get("ada"))?.state).toBe("idle");
    });

    it("appendAndReleaseIfIdle with input waiting writes the entries only and says pending", async () => {
      const fence = await running();
      await h.inbox.append(inbound({ text: "late", agent: "ada" }, { ids }));
      const write = h.runEnd.appendAndReleaseIfIdle?.bind(h.runEnd);
      if (!write) throw new Error("expected appendAndReleaseIfIdle");
      const ended = await write(fence, IDLE, { context: "personal", entries: [finalResult] });
      expect(ended.outcome).toBe("pending");
      expect((await h.threads.read("ada", "personal")).map((entry) => entry.entryId)).toEqual(
        ended.entries.map((entry) => entry.entryId),
      );
      expect(await h.lease.current("ada")).toEqual({ holder: "r1", epoch: fence.epoch });
      expect((await h.state.get("ada"))?.state).toBe("running");
      // A stale fence writes nothing at all.
      await h.lease.release(fence);
      await expect(write(fence, IDLE, { context: "personal", entries: [finalResult] })).rejects.toBeInstanceOf(
        LeaseLostError,
      );
      expect(await h.threads.read("ada", "personal")).toHaveLength(1);
    });

    it("with a stale fence: rejects with LeaseLostError and leaves the successor's lease and state alone", async () => {
      const fence = await running();
      await h.lease.release(fence);
      const successor = await h.lease.acquire("ada", "r2", 60_000);
      await h.state.update("ada", { state: "running", holder: "r2" });
      await expect(h.runEnd.releaseIfIdle(fence, IDLE)).rejects.toBeInstanceOf(LeaseLostError);
      expect(await h.lease.current("ada")).toEqual({ holder: "r2", epoch: successor?.epoch });
      expect((await h.state.get("ada"))?.state).toBe("running");
    });
  });
}
