import { ScriptedLlm } from "@moniro/ports/test";
import { ChildRecords } from "@moniro/store";
import { type TestRedis, testRedis } from "@moniro/store/test";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { staticDirectory } from "../runtime/agent-directory.js";
import { testAgent } from "../runtime/test-support.js";
import { withChildren } from "./child-directory.js";

// Which runner runs a child, over real Redis (the child records): only one
// where its parent is defined. A runner without the parent's definition (its
// YAML removed, the runner restarted) does not run the child, and says why.

const CHILD = "gone--a1b2c3d4";

describe("the child directory", () => {
  let t: TestRedis;
  let records: ChildRecords;

  beforeEach(async () => {
    t = testRedis();
    records = new ChildRecords(t.redis, t.prefix);
    await records.create({
      name: CHILD,
      parent: "gone",
      callId: "call-1",
      model: "m",
      maxSteps: 5,
      wait: false,
      createdAt: Date.now(),
    });
  });
  afterEach(async () => {
    await t.cleanup();
  });

  it("finds a live child where its parent is defined, with its parent's retry and restart policy", async () => {
    const parent = testAgent("gone", new ScriptedLlm([]), { restart: { minMs: 7, maxMs: 9, maxRestarts: 1 } });
    const child = await withChildren(staticDirectory([parent]), records).load?.(CHILD);
    expect(child).toMatchObject({ name: CHILD, parent: { name: "gone", callId: "call-1" } });
    expect(child?.settings.restart).toEqual(parent.settings.restart);
    expect(child?.settings.retry).toEqual(parent.settings.retry);
  });

  it("does not run a child whose parent is not defined here, and explains why", async () => {
    const directory = withChildren(staticDirectory([testAgent("other", new ScriptedLlm([]))]), records);
    expect(await directory.load?.(CHILD)).toBeUndefined();
    expect(directory.explainMissing(CHILD)).toMatch(
      /^sub-agent 'gone--a1b2c3d4' is not run here: its parent 'gone' is not a defined agent on this runner \(no agent named 'gone'/,
    );
    // Not canceled: a runner cannot tell a removed definition from one not deployed here yet.
    expect((await records.get(CHILD))?.status).toBe("running");
  });
});
