import { FakeClock } from "@moniro/ports/test";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createKeys } from "./keys.js";
import { RedisPersonalContext } from "./redis-personal-context.js";
import { type TestRedis, testRedis } from "./test/redis-fixture.js";

// The runner's prompt snapshot cache over the shared Redis: reused while the
// version has not moved, read again after any write from any process.

let t: TestRedis;
beforeEach(() => {
  t = testRedis();
});
afterEach(async () => {
  await t.cleanup();
});

function counted(redis: TestRedis["redis"]) {
  const seen: string[] = [];
  const send = redis.sendCommand.bind(redis);
  redis.sendCommand = ((command: { name: string }) => {
    seen.push(command.name);
    return send(command as never);
  }) as typeof redis.sendCommand;
  return seen;
}

describe("RedisPersonalContext prompt snapshot cache", () => {
  it("reads only the version while nothing changed; a write from another process is seen at the next snapshot", async () => {
    const clock = new FakeClock();
    const runnerRedis = t.connect();
    const runner = new RedisPersonalContext(runnerRedis, {
      prefix: t.prefix,
      clock,
      snapshotCache: { maxAgents: 10, maxAgeMs: 60_000 },
    });
    const executor = new RedisPersonalContext(t.connect(), { prefix: t.prefix });
    await executor.setMemory("ada", "tea", "green");
    expect((await runner.promptSnapshot("ada", { notes: 5 })).memory).toEqual([{ key: "tea", value: "green" }]);

    const commands = counted(runnerRedis);
    expect((await runner.promptSnapshot("ada", { notes: 5 })).memory).toEqual([{ key: "tea", value: "green" }]);
    expect(commands).toEqual(["get"]);

    for (const write of [
      () => executor.setMemory("ada", "tea", "oolong"),
      () => executor.addTodo("ada", "buy tea"),
      () => executor.addNote("ada", "tea is good", "personal"),
      () => executor.completeTodo("ada", "1"),
      () => executor.deleteMemory("ada", "tea"),
    ]) {
      const before = await runner.promptSnapshot("ada", { notes: 5 });
      await write();
      expect(await runner.promptSnapshot("ada", { notes: 5 })).not.toEqual(before);
    }
    expect(await runner.promptSnapshot("ada", { notes: 5 })).toMatchObject({ memory: [], todos: [] });
  });

  it("a write that did not bump the version (an older writer) is seen once the snapshot is older than maxAgeMs", async () => {
    const clock = new FakeClock();
    const runner = new RedisPersonalContext(t.connect(), {
      prefix: t.prefix,
      clock,
      snapshotCache: { maxAgents: 10, maxAgeMs: 60_000 },
    });
    expect((await runner.promptSnapshot("ada", { notes: 0 })).memory).toEqual([]);
    await t.redis.hset(createKeys(t.prefix).memory("ada"), "legacy", "written by hand");
    expect((await runner.promptSnapshot("ada", { notes: 0 })).memory).toEqual([]);
    clock.advance(60_000);
    expect((await runner.promptSnapshot("ada", { notes: 0 })).memory).toEqual([
      { key: "legacy", value: "written by hand" },
    ]);
  });
});
