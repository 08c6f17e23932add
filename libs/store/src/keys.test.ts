import { LANES } from "@moniro/envelopes";
import { describe, expect, it } from "vitest";
import { createKeys } from "./keys.js";
import { hashTagOf } from "./scripts/loader.js";

// Names a user chooses (agent, context = personal | <workflow>:<tag>) that once
// formed another key: `thread:personal:meta` was the meta hash of `personal`.
const AGENTS = ["ada", "meta", "thread", "a", "personal", "x-1"];
const CONTEXTS = [
  "personal",
  "personal:meta",
  "personal:envelopes",
  "meta:x",
  "envelopes:meta",
  "thread:meta",
  "wf:tag",
];

function agentKeys(keys: ReturnType<typeof createKeys>, agent: string): string[] {
  return [
    ...LANES.map((lane) => keys.inbox(agent, lane)),
    keys.inboxQuarantine(agent),
    ...CONTEXTS.flatMap((context) => [
      keys.thread(agent, context),
      keys.threadMeta(agent, context),
      keys.threadEnvelopes(agent, context),
    ]),
    keys.lease(agent),
    keys.epoch(agent),
    keys.state(agent),
    keys.memory(agent),
    keys.notes(agent),
    keys.todo(agent),
    keys.processExecutors(agent),
    keys.dedupe(agent, "01J0000000000000000000000A"),
  ];
}

describe("the key layout", () => {
  const keys = createKeys("moniro:");

  it("gives every (agent, context) its own keys: no user-chosen name forms another key", () => {
    const all = AGENTS.flatMap((agent) => agentKeys(keys, agent));
    const workspaces = ["wf:tag", "personal:meta", "a:b"].flatMap((context) => {
      const [workflow = "", tag = ""] = context.split(":");
      return Object.values(keys.workspace(workflow, tag));
    });
    const every = [...all, ...workspaces, keys.pendingAgents, keys.activeAgents, keys.workspaces];
    expect(new Set(every).size).toBe(every.length);
    expect(keys.thread("ada", "personal:meta")).not.toBe(keys.threadMeta("ada", "personal"));
    expect(keys.thread("ada", "personal:envelopes")).not.toBe(keys.threadEnvelopes("ada", "personal"));
  });

  it("puts every key of one agent in one hash slot, and different agents in different tags", () => {
    for (const agent of AGENTS) {
      expect(new Set(agentKeys(keys, agent).map(hashTagOf))).toEqual(new Set([`a:${agent}`]));
    }
    expect(new Set(Object.values(keys.workspace("wf", "tag")).map(hashTagOf))).toEqual(new Set(["w:wf:tag"]));
    expect(keys.channel("wf", "tag")).toBe(keys.workspace("wf", "tag").channel);
  });

  it("starts every key with the prefix (an ACL key pattern `~<prefix>*` covers them all)", () => {
    for (const key of agentKeys(keys, "ada")) expect(key.startsWith("moniro:")).toBe(true);
  });

  it("names the keys other services keep under the prefix: a workspace's lifecycle lock, BullMQ's prefix", () => {
    expect(keys.workspace("review", "pr-7").lifecycle).toBe("moniro:{w:review:pr-7}:lifecycle");
    // BullMQ adds ':<queue>:…'; the prefix's own ':' is not doubled, and one without it gets one.
    expect(keys.bullPrefix).toBe("moniro:{bull}");
    expect(createKeys("team").bullPrefix).toBe("team:{bull}");
    expect(hashTagOf(`${keys.bullPrefix}:schedules-moniro:wait`)).toBe("bull");
  });

  it("refuses a prefix with braces: it would move the hash tag", () => {
    expect(() => createKeys("my{app}:")).toThrow(/may not contain/);
  });

  it("reads the hash tag as Redis Cluster does", () => {
    expect(hashTagOf("x{a:ada}:lease")).toBe("a:ada");
    expect(hashTagOf("plain")).toBe("plain");
    expect(hashTagOf("x{}y{z}")).toBe("x{}y{z}");
  });
});
