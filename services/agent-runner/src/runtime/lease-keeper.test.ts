import type { Fence, Lease } from "@moniro/ports";
import { afterEach, describe, expect, it } from "vitest";
import { LeaseKeeper } from "./lease-keeper.js";
import { silentLogger } from "./logger.js";
import { eventually } from "./test-support.js";

const FENCE: Fence = { agent: "ada", holder: "r1", epoch: 3 };

/** A lease whose renewals answer `held` (flip it to simulate a release or a takeover). */
class FakeLease implements Lease {
  held = true;
  renewals = 0;
  async acquire(): Promise<Fence | null> {
    return null;
  }
  async current(): Promise<null> {
    return null;
  }
  async release(): Promise<void> {}
  async renew(): Promise<boolean> {
    this.renewals++;
    return this.held;
  }
}

describe("LeaseKeeper", () => {
  const keepers: LeaseKeeper[] = [];
  afterEach(() => {
    for (const keeper of keepers.splice(0)) keeper.stop();
  });

  function keep(lease: Lease, onLost: (why: string) => void) {
    const keeper = new LeaseKeeper(lease, FENCE, { ttlMs: 1_000, renewEveryMs: 5 }, onLost, silentLogger);
    keepers.push(keeper);
    return keeper;
  }

  it("reports the lease lost when a renewal is refused", async () => {
    const lease = new FakeLease();
    const lost: string[] = [];
    const keeper = keep(lease, (why) => lost.push(why));
    await eventually(() => lease.renewals > 0, "a renewal");
    lease.held = false;
    await eventually(() => keeper.lost, "the loss");
    expect(lost).toEqual(["lease for agent 'ada' (epoch 3) was taken over or expired"]);
  });

  it("while held (the loop is letting go of the lease), a refused renewal is not a loss; after resume it is", async () => {
    const lease = new FakeLease();
    const lost: string[] = [];
    const keeper = keep(lease, (why) => lost.push(why));
    await eventually(() => lease.renewals > 0, "a renewal");
    keeper.hold();
    lease.held = false;
    const renewalsWhenHeld = lease.renewals;
    await eventually(() => lease.renewals >= renewalsWhenHeld + 3, "refused renewals while held");
    expect(keeper.lost).toBe(false);
    expect(lost).toEqual([]);
    keeper.resume();
    await eventually(() => keeper.lost, "the loss after resume");
  });

  it("keeps renewing while held: a loop whose release found input meanwhile has not let its lease run down", async () => {
    const lease = new FakeLease();
    const keeper = keep(lease, () => {});
    await eventually(() => lease.renewals > 0, "a renewal");
    keeper.hold();
    const renewalsWhenHeld = lease.renewals;
    // Held for several renewal periods (a slow RunEnd round trip on a starved machine): the lease is still renewed.
    await eventually(() => lease.renewals >= renewalsWhenHeld + 3, "renewals while held");
    keeper.resume();
    expect(keeper.lost).toBe(false);
  });
});
