import type { Redis } from "ioredis";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createKeys } from "../keys.js";
import { type TestRedis, testRedis } from "../test/redis-fixture.js";
import { runScript } from "./loader.js";

describe("scripts on a single Redis", () => {
  let t: TestRedis;
  beforeEach(() => {
    t = testRedis();
  });
  afterEach(async () => {
    await t.cleanup();
  });

  /** The scripts' commands as they reach the client: EVAL (with the Lua) or EVALSHA. */
  function watch(redis: Redis): string[] {
    const sent: string[] = [];
    const send = redis.sendCommand.bind(redis);
    redis.sendCommand = ((command: { name: string }, ...rest: unknown[]) => {
      if (command.name === "eval" || command.name === "evalsha") sent.push(command.name);
      return (send as (...args: unknown[]) => unknown)(command, ...rest);
    }) as Redis["sendCommand"];
    return sent;
  }

  it("sends the script once per connection, then its sha; a server without it gets the script again", async () => {
    const redis = t.connect() as Redis;
    await redis.ping(); // connected: a command is not sent again from the offline queue
    const sent = watch(redis);
    const key = createKeys(t.prefix).state("ada");
    const update = (step: number) => runScript(redis, "updateState", [key], [1, "step", String(step)]);
    await update(1);
    await update(2);
    expect(sent).toEqual(["eval", "evalsha"]);
    // As after a restart that lost the script cache: the sha is refused once, the script goes again.
    const evalsha = redis.evalsha.bind(redis);
    let refusals = 0;
    redis.evalsha = ((...args: Parameters<Redis["evalsha"]>) => {
      if (refusals++ === 0) return Promise.reject(new Error("NOSCRIPT No matching script. Please use EVAL."));
      return evalsha(...args);
    }) as Redis["evalsha"];
    await update(3);
    expect(await redis.hget(key, "step")).toBe("3");
    expect(sent.at(-1)).toBe("eval");
    await redis.quit();
  });
});
