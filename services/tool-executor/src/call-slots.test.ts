import { describe, expect, it } from "vitest";
import { CallSlots } from "./call-slots.js";

describe("CallSlots", () => {
  it("hands a freed slot to the calls waiting for one, first come first served", async () => {
    const slots = new CallSlots(1);
    expect(slots.tryAcquire()).toBe(true);
    const order: string[] = [];
    const a = slots.acquireWithin(5_000).then((ok) => order.push(`a:${ok}`));
    const b = slots.acquireWithin(5_000).then((ok) => order.push(`b:${ok}`));
    slots.release();
    await a;
    expect(order).toEqual(["a:acquired"]);
    expect(slots.inUse).toBe(1);
    slots.release();
    await b;
    expect(order).toEqual(["a:acquired", "b:acquired"]);
    slots.release();
    expect(slots.inUse).toBe(0);
  });

  it("gives up after the wait, and a slot freed later goes to no one who left", async () => {
    const slots = new CallSlots(1);
    slots.tryAcquire();
    expect(await slots.acquireWithin(20)).toBe("busy");
    expect(await slots.acquireWithin(0)).toBe("busy");
    slots.release();
    expect(slots.inUse).toBe(0);
    expect(await slots.acquireWithin(0)).toBe("acquired");
  });

  it("idle() resolves once every slot is free, not when a slot passes to a waiting call", async () => {
    const slots = new CallSlots(1);
    slots.tryAcquire();
    const waiting = slots.acquireWithin(5_000);
    let idle = false;
    const whenIdle = slots.idle().then(() => {
      idle = true;
    });
    slots.release();
    expect(await waiting).toBe("acquired");
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(idle).toBe(false);
    slots.release();
    await whenIdle;
    expect(idle).toBe(true);
  });

  it("hands the longest-waiting transferable call to another executor's free slot, never one that must run here", async () => {
    const slots = new CallSlots(1);
    slots.tryAcquire();
    const pinned = slots.acquireWithin(5_000);
    const first = slots.acquireWithin(5_000, { transferable: true });
    const second = slots.acquireWithin(5_000, { transferable: true });
    expect(slots.handOffOldest("x2")).toBe(true);
    expect(await first).toEqual({ handOffTo: "x2" });
    expect(slots.waiting).toBe(2);
    slots.release();
    expect(await pinned).toBe("acquired");
    expect(slots.handOffOldest("x3")).toBe(true);
    expect(await second).toEqual({ handOffTo: "x3" });
    expect(slots.handOffOldest("x3")).toBe(false);
    expect(slots.inUse).toBe(1);
  });

  it("reports a slot freed on a full executor with nobody waiting, and only then", async () => {
    const slots = new CallSlots(2);
    const freed: number[] = [];
    slots.onFreedFromFull = () => freed.push(slots.inUse);
    slots.tryAcquire();
    slots.release(); // never full: nothing to announce
    expect(freed).toEqual([]);
    slots.tryAcquire();
    slots.tryAcquire();
    const waiting = slots.acquireWithin(5_000);
    slots.release(); // the slot passes to the waiting call
    expect(await waiting).toBe("acquired");
    expect(freed).toEqual([]);
    slots.release(); // full, nobody waiting: announced
    expect(freed).toEqual([1]);
    slots.release();
    expect(freed).toEqual([1]);
  });
});
