import type { Lease } from "@moniro/ports";
import { afterEach, beforeEach, describe, expect, it } from "vitest";

export interface LeaseHarness {
  lease: Lease;
  /** Lets `ms` pass for the lease's notion of time (fake clock, or real time for Redis). */
  passTime(ms: number): Promise<void>;
  cleanup?(): Promise<void>;
}

/** The Lease port's behaviour, for the in-memory fake and the Redis adapter alike. */
export function describeLeaseContract(name: string, factory: () => Promise<LeaseHarness> | LeaseHarness): void {
  describe(`Lease contract: ${name}`, () => {
    let h: LeaseHarness;
    beforeEach(async () => {
      h = await factory();
    });
    afterEach(async () => {
      await h.cleanup?.();
    });

    it("is exclusive: while held, nobody (not even the holder) acquires it again", async () => {
      const fence = await h.lease.acquire("ada", "r1", 10_000);
      expect(fence).toEqual({ agent: "ada", holder: "r1", epoch: expect.any(Number) });
      expect(fence?.epoch).toBeGreaterThan(0);
      expect(await h.lease.acquire("ada", "r2", 10_000)).toBeNull();
      expect(await h.lease.acquire("ada", "r1", 10_000)).toBeNull();
      expect(await h.lease.current("ada")).toEqual({ holder: "r1", epoch: fence?.epoch });
      expect(await h.lease.acquire("bob", "r2", 10_000)).not.toBeNull();
    });

    it("hands out a higher epoch on every acquisition", async () => {
      const first = await h.lease.acquire("ada", "r1", 10_000);
      if (!first) throw new Error("expected the lease");
      await h.lease.release(first);
      expect(await h.lease.current("ada")).toBeNull();
      const second = await h.lease.acquire("ada", "r2", 10_000);
      expect(second?.epoch).toBe(first.epoch + 1);
    });

    it("renews and releases only for the fence that holds it", async () => {
      const fence = await h.lease.acquire("ada", "r1", 10_000);
      if (!fence) throw new Error("expected the lease");
      expect(await h.lease.renew(fence, 10_000)).toBe(true);
      expect(await h.lease.renew({ ...fence, epoch: fence.epoch - 1 }, 10_000)).toBe(false);
      expect(await h.lease.renew({ ...fence, holder: "r2" }, 10_000)).toBe(false);
      await h.lease.release({ ...fence, holder: "r2" });
      await h.lease.release({ ...fence, epoch: fence.epoch + 1 });
      expect(await h.lease.current("ada")).toEqual({ holder: "r1", epoch: fence.epoch });
      await h.lease.release(fence);
      expect(await h.lease.current("ada")).toBeNull();
      expect(await h.lease.renew(fence, 10_000)).toBe(false);
    });

    it("expires after its TTL unless renewed; the old holder can then neither renew nor release", async () => {
      const fence = await h.lease.acquire("ada", "r1", 100);
      if (!fence) throw new Error("expected the lease");
      await h.passTime(250);
      expect(await h.lease.current("ada")).toBeNull();
      const successor = await h.lease.acquire("ada", "r2", 10_000);
      expect(successor?.epoch).toBe(fence.epoch + 1);
      expect(await h.lease.renew(fence, 10_000)).toBe(false);
      await h.lease.release(fence);
      expect(await h.lease.current("ada")).toEqual({ holder: "r2", epoch: fence.epoch + 1 });
    });
  });
}
