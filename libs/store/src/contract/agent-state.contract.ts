import type { AgentStateStore } from "@moniro/ports";
import type { FakeClock } from "@moniro/ports/test";
import { afterEach, beforeEach, describe, expect, it } from "vitest";

export interface AgentStateHarness {
  state: AgentStateStore;
  clock: FakeClock;
  cleanup?(): Promise<void>;
}

/** The AgentStateStore port's behaviour, for the in-memory fake and the Redis adapter alike. */
export function describeAgentStateContract(
  name: string,
  factory: () => Promise<AgentStateHarness> | AgentStateHarness,
): void {
  describe(`AgentStateStore contract: ${name}`, () => {
    let h: AgentStateHarness;
    beforeEach(async () => {
      h = await factory();
    });
    afterEach(async () => {
      await h.cleanup?.();
    });

    it("has no record for an agent that never ran", async () => {
      expect(await h.state.get("ada")).toBeNull();
    });

    it("merges patches, stamps updatedAt, and clears fields patched with undefined", async () => {
      h.clock.set(Date.UTC(2025, 0, 5));
      await h.state.update("ada", { state: "running", cycleId: "c1", step: 1, holder: "r1", context: "personal" });
      await h.state.update("ada", { step: 2 });
      expect(await h.state.get("ada")).toEqual({
        state: "running",
        cycleId: "c1",
        step: 2,
        holder: "r1",
        context: "personal",
        restarts: 0,
        updatedAt: Date.UTC(2025, 0, 5),
      });
      h.clock.advance(1000);
      await h.state.update("ada", { state: "idle", cycleId: undefined, step: undefined, context: undefined });
      await h.state.update("ada", { restarts: 2, error: "boom" });
      expect(await h.state.get("ada")).toEqual({
        state: "idle",
        holder: "r1",
        restarts: 2,
        error: "boom",
        updatedAt: Date.UTC(2025, 0, 5) + 1000,
      });
      expect(await h.state.get("bob")).toBeNull();
    });
  });
}
