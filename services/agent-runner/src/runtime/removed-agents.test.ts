import { createSubjects } from "@moniro/envelopes";
import { InMemoryInbox, InMemoryLease, inbound } from "@moniro/ports/test";
import type { JetStreamClient } from "@nats-io/jetstream";
import { describe, expect, it } from "vitest";
import { silentLogger } from "./logger.js";
import { removedAgents } from "./removed-agents.js";

function setup() {
  const inbox = new InMemoryInbox();
  const lease = new InMemoryLease();
  const acquired: string[] = [];
  const published: string[] = [];
  const removed = removedAgents({
    inbox,
    lease: Object.assign(Object.create(lease), {
      acquire: (agent: string, holder: string, ttlMs: number) => {
        acquired.push(agent);
        return lease.acquire(agent, holder, ttlMs);
      },
    }),
    holder: "runner-1",
    js: { publish: async (subject: string) => published.push(subject) } as unknown as JetStreamClient,
    subjects: createSubjects("t"),
    logger: silentLogger,
    removedReason: (agent) => (agent.includes("__") ? `agent '${agent}' was deleted` : undefined),
  });
  return { inbox, acquired, published, removed };
}

describe("removed agents", () => {
  it("a removed agent with nothing waiting is left alone: no lease taken, so none of its keys is written again", async () => {
    const { acquired, removed } = setup();
    expect(await removed.drain("review__main__helper")).toBe(0);
    expect(acquired).toEqual([]);
  });

  it("a removed agent's waiting inputs go to the DLQ under its lease; an agent not removed is not touched", async () => {
    const { inbox, acquired, published, removed } = setup();
    const waiting = inbound({ agent: "review__main__helper", text: "stand by" });
    await inbox.append(waiting);
    await inbox.append(inbound({ agent: "alice", text: "hi" }));
    expect(await removed.drain("alice")).toBe(0);
    expect(await removed.drain("review__main__helper")).toBe(1);
    expect(acquired).toEqual(["review__main__helper"]);
    expect(published).toEqual(["t.dlq.in"]);
    expect(await inbox.pending("review__main__helper")).toEqual([]);
    expect(await inbox.pending("alice")).toHaveLength(1);
    // Defined again and its DLQ record replayed (same envelope id): taken, not refused as a duplicate.
    expect(await inbox.append(waiting)).toEqual({ duplicate: false });
  });
});
