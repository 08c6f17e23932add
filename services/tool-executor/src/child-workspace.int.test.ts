import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { RedisWorkspaceStore } from "@moniro/store";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type ExecutorFixture, executorFixture } from "./test/executor-fixture.js";

// A sub-agent works in its parent's directory and seat. `boss-` is a valid agent name (no `--`),
// and its child `boss---<id>` must be taken for a child of `boss-`, never of `boss`.
describe("a sub-agent's directory and seat through the tool-executor", () => {
  let world: ExecutorFixture;
  const child = "boss---a1b2c3d4";

  beforeEach(async () => {
    world = await executorFixture({
      boss: "name: boss\nmodel: mock\n",
      "boss-": "name: boss-\nmodel: mock\n",
    });
    for (const [agent, file, text] of [
      ["boss", "secret.txt", "boss's own"],
      ["boss-", "notes.txt", "boss-'s notes"],
    ] as const) {
      mkdirSync(join(world.workspacesDir, agent), { recursive: true });
      writeFileSync(join(world.workspacesDir, agent, file), text);
    }
    await world.startExecutor();
  });
  afterEach(async () => {
    await world.cleanup();
  });

  it("the child of an agent whose name ends in '-' reads its parent's directory, not the directory of the agent without the '-'", async () => {
    const own = await world.call(world.callEnvelope("read", { path: "notes.txt" }, { agent: child }));
    expect(own.content).toContain("boss-'s notes");
    const other = await world.call(world.callEnvelope("read", { path: "secret.txt" }, { agent: child }));
    expect(other).toMatchObject({ isError: true, errorCode: "not-found" });
    expect(other.content).not.toContain("boss's own");
    const listed = await world.call(world.callEnvelope("ls", { path: "." }, { agent: child }));
    expect(listed.content).toContain("notes.txt");
    expect(listed.content).not.toContain("secret.txt");
  });

  it("the child of 'boss-' does not take the seat of 'boss' in a workspace boss is a member of", async () => {
    const store = new RedisWorkspaceStore(world.redis.redis, { prefix: world.redis.prefix });
    await store.instance("review", "main").start([{ name: "boss", agent: "boss", kind: "ref" }]);
    mkdirSync(join(world.workspacesDir, "review__main"), { recursive: true });
    writeFileSync(join(world.workspacesDir, "review__main", "plan.txt"), "review team only");
    const read = await world.call(
      world.callEnvelope("read", { path: "plan.txt" }, { agent: child, context: "review:main" }),
    );
    expect(read).toMatchObject({ isError: true, errorCode: "not_a_member" });
    expect(read.content).toBe(
      'boss- is not a participant in workflow "review".\nAdd boss- to .workflows/review.yaml first.',
    );
  });
});
