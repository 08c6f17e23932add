import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { decode, type InboundEnvelope, inboundEnvelopeSchema } from "@moniro/envelopes";
import { RedisWorkspaceStore } from "@moniro/store";
import type { Subscription } from "@nats-io/transport-node";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type ExecutorFixture, executorFixture } from "./test/executor-fixture.js";

// The team tools and shared directories through a real executor: inputs go out on `<ns>.in.<agent>`
// (JetStream), membership is read from Redis on every call, file tools and exec use the shared directory.
describe("team tools through the tool-executor", () => {
  let world: ExecutorFixture;
  let store: RedisWorkspaceStore;
  let inputs: InboundEnvelope[];
  let tap: Subscription;

  beforeEach(async () => {
    world = await executorFixture({
      ada: "name: ada\nmodel: mock\n",
      bob: "name: bob\nmodel: mock\n",
      eve: "name: eve\nmodel: mock\n",
    });
    store = new RedisWorkspaceStore(world.redis.redis, { prefix: world.redis.prefix });
    await store.instance("review", "main").start([
      { name: "ada", agent: "ada", kind: "ref" },
      { name: "bob", agent: "bob", kind: "ref" },
    ]);
    await store.instance("ops", "main").start([{ name: "eve", agent: "eve", kind: "ref" }]);
    inputs = [];
    tap = world.nc.subscribe(`${world.namespace}.in.*`, {
      callback: (_error, msg) => {
        const decoded = decode(inboundEnvelopeSchema, msg.data, "inbound");
        if (decoded.ok) inputs.push(decoded.value);
      },
    });
    await world.nc.flush();
    await world.startExecutor();
  });
  afterEach(async () => {
    tap.unsubscribe();
    await world.cleanup();
  });

  async function until(condition: () => boolean, what: string): Promise<void> {
    for (let i = 0; i < 500 && !condition(); i++) await new Promise((resolve) => setTimeout(resolve, 20));
    if (!condition()) throw new Error(`gave up waiting for ${what}`);
  }

  it("channel_send '@bob check line 42' pushes bob an immediate input on <ns>.in.bob, durably", async () => {
    const done = await world.call(
      world.callEnvelope("channel_send", { text: "@bob check line 42" }, { context: "review:main" }),
    );
    expect(done).toMatchObject({ isError: false });
    expect(done.data).toMatchObject({ notified: ["bob"], unreached: [] });
    await until(() => inputs.length === 1, "bob's input");
    expect(inputs[0]).toMatchObject({
      agent: "bob",
      source: "ws:review:main",
      context: "review:main",
      priority: "immediate",
      text: "ada: @bob check line 42",
    });
    // In MONIRO_IN: the agent-runner consumes it from there.
    const js = (await import("@nats-io/jetstream")).jetstreamManager;
    const info = await (await js(world.nc)).streams.info(world.subjects.streams.in);
    expect(info.state.messages).toBe(1);
  });

  it("message to agent:<name> or ws:<instance> is refused, pointing to channel_send; nothing is sent", async () => {
    const dm = await world.call(world.callEnvelope("message", { to: "agent:bob", text: "hi" }));
    expect(dm).toMatchObject({ isError: true, errorCode: "unserved-recipient" });
    expect(dm.content).toContain("agent-to-agent DMs do not exist");
    expect(dm.content).toContain("channel_send");
    const ws = await world.call(world.callEnvelope("message", { to: "ws:review:main", text: "hi" }));
    expect(ws).toMatchObject({ isError: true, errorCode: "unserved-recipient" });
    expect(ws.content).toContain("post there with channel_send");
    expect(inputs).toEqual([]);
  });

  it("a member's file tools and exec work in <workspaces>/<workflow>__<tag>; personal context stays its own", async () => {
    const shared = join(world.workspacesDir, "review__main");
    const wrote = await world.call(
      world.callEnvelope("write", { path: "notes.txt", content: "line 42" }, { context: "review:main" }),
    );
    expect(wrote).toMatchObject({ isError: false });
    expect(readFileSync(join(shared, "notes.txt"), "utf8")).toBe("line 42");
    const cat = await world.call(
      world.callEnvelope("exec", { command: "cat notes.txt" }, { agent: "bob", context: "review:main" }),
    );
    expect(cat.content).toContain("line 42");
    const personal = await world.call(world.callEnvelope("read", { path: "notes.txt" }, { agent: "bob" }));
    expect(personal).toMatchObject({ isError: true, errorCode: "not-found" });
  });

  it("attacks: a non-member naming a workspace context is refused; a member reaches no other directory", async () => {
    const shared = join(world.workspacesDir, "review__main");
    mkdirSync(shared, { recursive: true });
    writeFileSync(join(shared, "secret.txt"), "review only");
    mkdirSync(join(world.workspacesDir, "eve"), { recursive: true });
    writeFileSync(join(world.workspacesDir, "eve", "diary.txt"), "eve's own");
    // eve is a member of ops:main, not of review:main.
    for (const [tool, input] of [
      ["read", { path: "secret.txt" }],
      ["exec", { command: "cat secret.txt" }],
      ["write", { path: "planted.txt", content: "x" }],
      ["channel_send", { text: "@ada hi" }],
    ] as const) {
      const refused = await world.call(world.callEnvelope(tool, input, { agent: "eve", context: "review:main" }));
      expect(refused, tool).toMatchObject({ isError: true, errorCode: "not_a_member" });
      expect(refused.content, tool).toBe(
        'eve is not a participant in workflow "review".\nAdd eve to .workflows/review.yaml first.',
      );
    }
    expect(existsSync(join(shared, "planted.txt"))).toBe(false);
    // ada, a member of review:main: neither ops:main's directory nor eve's own.
    for (const path of ["../ops__main/x", "../eve/diary.txt", join(world.workspacesDir, "eve", "diary.txt")]) {
      const read = await world.call(world.callEnvelope("read", { path }, { context: "review:main" }));
      expect(read, path).toMatchObject({ isError: true, errorCode: "path-outside-workspace" });
    }
    const breakout = await world.call(
      world.callEnvelope("exec", { command: "cat ../eve/diary.txt; ls .." }, { context: "review:main" }),
    );
    expect(breakout.content).not.toContain("eve's own");
    const stopped = await store.instance("review", "main").stop();
    expect(stopped.stopped).toBe(true);
    const late = await world.call(world.callEnvelope("read", { path: "secret.txt" }, { context: "review:main" }));
    expect(late).toMatchObject({ isError: true, errorCode: "workflow_not_running" });
    expect(late.content).toBe('workflow "review" is not running.\nStart it with: moniro start review');
    expect(inputs).toEqual([]);
  });
});
