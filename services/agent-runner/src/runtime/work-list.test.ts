import { InMemoryAgentStateStore, InMemoryInbox, inbound } from "@moniro/ports/test";
import { describe, expect, it } from "vitest";
import { RECONCILE_BATCH, WorkList } from "./work-list.js";

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

  it("reconciles through one read per agent when it has one, never more than RECONCILE_BATCH at a time", async () => {
    const names = Array.from({ length: 3 * RECONCILE_BATCH + 5 }, (_, i) => `agent-${i}`);
    let inFlight = 0;
    let most = 0;
    const looked: string[] = [];
    const list = new WorkList({
      inbox: {
        agentsWithPending: async () => [],
        depth: async () => {
          throw new Error("depth is not read when pendingWork is given");
        },
      },
      state: {
        get: async () => {
          throw new Error("state is not read when pendingWork is given");
        },
      },
      pendingWork: async (agent) => {
        inFlight++;
        most = Math.max(most, inFlight);
        looked.push(agent);
        await new Promise((resolve) => setTimeout(resolve, 1));
        inFlight--;
        const index = Number(agent.slice("agent-".length));
        return { inputs: index % 10 === 0 ? 2 : 0, active: index % 7 === 0 };
      },
      names: () => names,
      reconcileEveryMs: 30_000,
    });
    const found = await list.collect();
    expect(looked.sort()).toEqual([...names].sort());
    expect(most).toBe(RECONCILE_BATCH);
    expect([...found.pending].sort()).toEqual(names.filter((_, i) => i % 10 === 0).sort());
    expect([...found.listed].sort()).toEqual(names.filter((_, i) => i % 10 === 0 || i % 7 === 0).sort());
  });

  it("retries the quarantined entries of each agent its reconciliation found some for, one retry pass at a time", async () => {
    let now = 0;
    const retried: string[] = [];
    let release: () => void = () => {};
    const list = new WorkList({
      inbox: { agentsWithPending: async () => [], depth: async () => ({ immediate: 0, normal: 0, background: 0 }) },
      state: new InMemoryAgentStateStore(),
      pendingWork: async (agent) => ({
        inputs: 0,
        active: false,
        quarantined: agent === "bob" || agent === "dee" ? 2 : 0,
      }),
      // A DLQ that is down holds a retry: the next reconciliation starts none beside it.
      retryQuarantined: (agent) => {
        retried.push(agent);
        return new Promise((resolve) => {
          release = resolve;
        });
      },
      names: () => ["ada", "bob", "cy", "dee"],
      reconcileEveryMs: 1_000,
      now: () => now,
    });
    await list.collect();
    await new Promise((resolve) => setImmediate(resolve));
    expect(retried).toEqual(["bob"]);
    now += 1_000;
    await list.collect();
    expect(retried).toEqual(["bob"]);
    release();
    await new Promise((resolve) => setImmediate(resolve));
    expect(retried).toEqual(["bob", "dee"]);
    release();
    await new Promise((resolve) => setImmediate(resolve));
    now += 1_000;
    await list.collect();
    await new Promise((resolve) => setImmediate(resolve));
    expect(retried).toEqual(["bob", "dee", "bob"]);
  });
});
