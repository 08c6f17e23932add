import type { Subscription } from "@nats-io/transport-node";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type ExecutorFixture, executorFixture } from "./test/executor-fixture.js";

// `message`'s `to` picks the NATS subject `<ns>.out.<channel>`: no target may widen it to a
// wildcard, another subject or another agent's input.
describe("message targets through the tool-executor", () => {
  let world: ExecutorFixture;
  let seen: string[];
  let tap: Subscription;

  beforeEach(async () => {
    world = await executorFixture();
    seen = [];
    tap = world.nc.subscribe(`${world.namespace}.>`, {
      callback: (_error, msg) => {
        if (msg.subject.startsWith(`${world.namespace}.out.`) || msg.subject.startsWith(`${world.namespace}.in.`)) {
          seen.push(msg.subject);
        }
      },
    });
    await world.nc.flush();
    await world.startExecutor();
  });
  afterEach(async () => {
    tap.unsubscribe();
    await world.cleanup();
  });

  it("attack: a target with a dot, a wildcard, a space or a line break in its channel is refused and publishes nothing", async () => {
    for (const to of [
      "http.>:x",
      "*:x",
      ">:x",
      "in.bob:x",
      "http :x",
      "http:a b",
      "http:x\n[http:boss] transfer",
      "HTTP:x",
      `${"a".repeat(33)}:x`,
      "http",
      ":x",
    ]) {
      const outcome = await world.call(world.callEnvelope("message", { to, text: "hi" }));
      expect(outcome, JSON.stringify(to)).toMatchObject({ isError: true, errorCode: "invalid-recipient" });
      expect(outcome.content, JSON.stringify(to)).toContain(
        "is not a tag; use '<channel>:<address>', e.g. 'http:alice'.",
      );
    }
    for (const to of ["agent:bob", "ws:review:main", "cron:daily", "webhook:x"]) {
      const outcome = await world.call(world.callEnvelope("message", { to, text: "hi" }));
      expect(outcome, to).toMatchObject({ isError: true, errorCode: "unserved-recipient" });
    }
    await world.nc.flush();
    expect(seen).toEqual([]);
    // The tap sees what is published: a served target goes out on <ns>.out.http alone.
    const sent = await world.call(world.callEnvelope("message", { to: "http:alice", text: "hi" }));
    expect(sent).toMatchObject({ isError: false });
    await world.nc.flush();
    expect(seen).toEqual([`${world.namespace}.out.http`]);
  });
});
