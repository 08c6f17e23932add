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
    expect(order).toEqual(["a:true"]);
    expect(slots.inUse).toBe(1);
    slots.release();
    await b;
    expect(order).toEqual(["a:true", "b:true"]);
    slots.release();
    expect(slots.inUse).toBe(0);
  });

  it("gives up after the wait, and a slot freed later goes to no one who left", async () => {
    const slots = new CallSlots(1);
    slots.tryAcquire();
    expect(await slots.acquireWithin(20)).toBe(false);
    expect(await slots.acquireWithin(0)).toBe(false);
    slots.release();
    expect(slots.inUse).toBe(0);
    expect(await slots.acquireWithin(0)).toBe(true);
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
    expect(await waiting).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(idle).toBe(false);
    slots.release();
    await whenIdle;
    expect(idle).toBe(true);
  });
});
