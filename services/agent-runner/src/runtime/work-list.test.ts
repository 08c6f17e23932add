import { InMemoryAgentStateStore, InMemoryInbox, inbound } from "@moniro/ports/test";
import { describe, expect, it } from "vitest";
import { WorkList } from "./work-list.js";

describe("the sweeper's work list", () => {
  it("finds an agent with input or unfinished work that the indexes lost, on the next reconciliation", async () => {
    const inbox = new InMemoryInbox();
    const state = new InMemoryAgentStateStore();
    await inbox.append(inbound({ agent: "ada", text: "lost from the index" }));
    await state.update("bob", { state: "running" });
    await state.update("cy", { state: "idle" });
    let now = 0;
    const list = new WorkList({
      // Indexes that lost both agents (a process died between the agent's write and the index's).
      inbox: { agentsWithPending: async () => [], depth: (agent) => inbox.depth(agent) },
      state,
      activeAgents: async () => [],
      names: () => ["ada", "bob", "cy"],
      reconcileEveryMs: 30_000,
      now: () => now,
    });
    const first = await list.collect();
    expect([...first.listed].sort()).toEqual(["ada", "bob"]);
    expect([...first.pending]).toEqual(["ada"]);
    now += 1_000;
    expect([...(await list.collect()).listed]).toEqual([]);
    now += 30_000;
    expect([...(await list.collect()).listed].sort()).toEqual(["ada", "bob"]);
  });

  it("takes the indexes' members between reconciliations", async () => {
    const list = new WorkList({
      inbox: {
        agentsWithPending: async () => ["ada"],
        depth: async () => ({ immediate: 0, normal: 0, background: 0 }),
      },
      state: new InMemoryAgentStateStore(),
      activeAgents: async () => ["bob"],
      names: () => [],
      reconcileEveryMs: 30_000,
    });
    const found = await list.collect();
    expect([...found.listed].sort()).toEqual(["ada", "bob"]);
    expect([...found.pending]).toEqual(["ada"]);
  });
});
