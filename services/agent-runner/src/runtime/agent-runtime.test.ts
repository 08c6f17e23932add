import type { LlmRequest } from "@moniro/ports";
import { systemClock } from "@moniro/ports";
import {
  FakeToolBus,
  InMemoryAgentStateStore,
  InMemoryInbox,
  InMemoryLease,
  InMemoryRunEnd,
  InMemoryThreadStore,
  inbound,
  ScriptedLlm,
  sequentialIds,
  textReply,
  toolReply,
  toolUse,
} from "@moniro/ports/test";
import { afterEach, describe, expect, it } from "vitest";
import { INTERRUPTED_CALL_CONTENT } from "../loop/index.js";
import { staticDirectory } from "./agent-directory.js";
import { AgentRuntime } from "./agent-runtime.js";
import { eventually, testAgent, testLoopDeps } from "./test-support.js";

const TIMING = { leaseTtlMs: 400, leaseRenewMs: 50, sweepEveryMs: 40, shutdownGraceMs: 2_000 };
const ids = sequentialIds(700_000);

function userText(request: LlmRequest | undefined): string {
  return (request?.messages ?? [])
    .filter((message) => message.role === "user")
    .flatMap((message) => message.content)
    .map((block) => (block.type === "text" ? block.text : ""))
    .join("\n");
}

/** Shared in-memory "Redis" and any number of runtimes ("runners") over it. */
function cluster(llm: ScriptedLlm, options: { tools?: FakeToolBus; maxRestarts?: number } = {}) {
  const lease = new InMemoryLease(systemClock);
  const inbox = new InMemoryInbox(systemClock);
  const state = new InMemoryAgentStateStore(systemClock);
  const threads = new InMemoryThreadStore({ lease, clock: systemClock, inbox, state });
  const tools = options.tools ?? new FakeToolBus({ message: () => "sent", ls: () => "a.txt" });
  const directory = staticDirectory(
    [testAgent("ada", llm, { restart: { minMs: 1, maxMs: 5, maxRestarts: options.maxRestarts ?? 2 } })],
    "test definitions",
  );
  const runEnd = new InMemoryRunEnd({ lease, inbox, state });
  const runtimes: AgentRuntime[] = [];
  const runner = (holder: string) => {
    const runtime = new AgentRuntime({
      holder,
      lease,
      inbox,
      state,
      directory,
      loopDeps: testLoopDeps({ inbox, threads, state, runEnd, tools }),
      activeAgents: () => state.activeAgents(),
      timing: TIMING,
    });
    runtimes.push(runtime);
    return runtime;
  };
  const send = async (text: string) => {
    const envelope = inbound({ agent: "ada", text }, { ids });
    await inbox.append(envelope);
    return envelope;
  };
  return { lease, threads, inbox, state, runEnd, tools, directory, runner, send, runtimes };
}

const stops: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const stop of stops.splice(0)) await stop();
});
function track(c: ReturnType<typeof cluster>) {
  stops.push(async () => {
    for (const runtime of c.runtimes) await runtime.stop();
  });
  return c;
}

describe("AgentRuntime", () => {
  it("wakes the agent for new input, runs the loop, then releases the lease", async () => {
    const llm = new ScriptedLlm(textReply("noted"));
    const c = track(cluster(llm));
    const runtime = c.runner("r1");
    await c.send("hello ada");
    expect(await runtime.wake("ada")).toBe("started");
    await runtime.settled("ada");
    expect(userText(llm.lastRequest)).toContain("hello ada");
    expect(await c.lease.current("ada")).toBeNull();
    expect(await c.inbox.pending("ada")).toEqual([]);
    expect((await c.state.get("ada"))?.state).toBe("idle");
    // Nothing is kept for an idle agent.
    expect(runtime.tracked()).toEqual([]);
  });

  it("reads the thread ahead with its lease attempt, and only when the attempt wins", async () => {
    const llm = new ScriptedLlm(textReply("noted"));
    const c = track(cluster(llm));
    const reads: string[] = [];
    const { read, readIfHeld } = {
      read: c.threads.read.bind(c.threads),
      readIfHeld: c.threads.readIfHeld.bind(c.threads),
    };
    c.threads.read = (...args) => {
      reads.push("read");
      return read(...args);
    };
    c.threads.readIfHeld = async (...args) => {
      const entries = await readIfHeld(...args);
      reads.push(entries === null ? `readIfHeld ${args[2]}: not held` : `readIfHeld ${args[2]}`);
      return entries;
    };
    const other = await c.lease.acquire("ada", "r2", 60_000);
    await c.send("hello ada");
    expect(await c.runner("r1").wake("ada")).toBe("held-elsewhere");
    if (other) await c.lease.release(other);
    const runtime = c.runner("r1");
    expect(await runtime.wake("ada")).toBe("started");
    await runtime.settled("ada");
    expect(userText(llm.lastRequest)).toContain("hello ada");
    // The winning wake's read is the run's only thread read.
    expect(reads).toEqual(["readIfHeld r1: not held", "readIfHeld r1"]);
  });

  it("refuses to wake an agent without a definition", async () => {
    const c = track(cluster(new ScriptedLlm(textReply(""))));
    expect(await c.runner("r1").wake("bob")).toBe("unknown-agent");
  });

  it("leaves input to the holder when another runner holds the lease; the holder's loop drains it", async () => {
    let release: () => void = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const llm = new ScriptedLlm(async (_request, { index }) => {
      if (index === 0) await gate;
      return textReply("ok");
    });
    const c = track(cluster(llm));
    const [r1, r2] = [c.runner("r1"), c.runner("r2")];
    await c.send("first");
    expect(await r1.wake("ada")).toBe("started");
    await eventually(() => llm.requests.length === 1, "the first call");
    await c.send("second");
    expect(await r2.wake("ada")).toBe("held-elsewhere");
    release();
    await eventually(() => userText(llm.lastRequest).includes("second"), "the second input to reach the model");
    await r1.settled("ada");
    expect(r2.running()).toEqual([]);
    expect(r2.tracked()).toEqual([]);
    expect(r1.tracked()).toEqual([]);
    expect(await c.inbox.pending("ada")).toEqual([]);
  });

  it("does not lose a wakeup that arrives while the loop is letting go of the lease", async () => {
    const llm = new ScriptedLlm(textReply("ok"));
    const c = track(cluster(llm));
    const runtime = c.runner("r1");
    let injected = false;
    // Right after the loop let the lease go (idle), before its run has ended, new input arrives and wakes
    // this runner, which still counts the run as its own and so answers "running-here" without the lease.
    const releaseIfIdle = c.runEnd.releaseIfIdle.bind(c.runEnd);
    c.runEnd.releaseIfIdle = async (fence, patch) => {
      const result = await releaseIfIdle(fence, patch);
      if (result === "released" && !injected) {
        injected = true;
        await c.send("late input");
        expect(await runtime.wake("ada")).toBe("running-here");
      }
      return result;
    };
    await c.send("early input");
    await runtime.wake("ada");
    await eventually(() => userText(llm.lastRequest).includes("late input"), "the late input to be handled");
    await eventually(async () => (await c.inbox.pending("ada")).length === 0, "an empty inbox");
  });

  it("never runs one agent on two runners at once", async () => {
    let concurrent = 0;
    let maxConcurrent = 0;
    const llm = new ScriptedLlm(async () => {
      concurrent++;
      maxConcurrent = Math.max(maxConcurrent, concurrent);
      await new Promise((resolve) => setTimeout(resolve, 5));
      concurrent--;
      return textReply("ok");
    });
    const c = track(cluster(llm));
    const runners = [c.runner("r1"), c.runner("r2"), c.runner("r3")];
    for (const runner of runners) runner.start();
    for (let i = 0; i < 12; i++) {
      await c.send(`input ${i}`);
      await runners[i % runners.length]?.wake("ada");
    }
    await eventually(
      async () => (await c.inbox.pending("ada")).length === 0 && !(await c.lease.current("ada")),
      "all input handled",
    );
    const seen = c.threads.entries("ada").filter((entry) => entry.kind === "input");
    expect(seen).toHaveLength(12);
    expect(maxConcurrent).toBe(1);
  });

  it("takes over an agent whose runner died mid-tool-call: marks the call interrupted and continues", async () => {
    const llm = new ScriptedLlm(textReply("picking up"));
    const c = track(cluster(llm));
    // A runner that died: it held the lease, wrote a tool call, and never came back.
    const dead = await c.lease.acquire("ada", "dead-runner", 200);
    if (!dead) throw new Error("expected the lease");
    const envelope = inbound({ agent: "ada", text: "list files" }, { ids });
    await c.threads.append(dead, "personal", [
      {
        kind: "input",
        cycleId: "c0",
        ts: 0,
        envelopeId: envelope.id,
        source: envelope.source,
        replyTo: envelope.replyTo,
        context: "personal",
        lane: "immediate",
        text: envelope.text,
        attachments: [],
      },
      {
        kind: "assistant",
        cycleId: "c0",
        ts: 0,
        step: 0,
        text: "",
        toolUses: [toolUse("ls", {}, "toolu_dead")],
        stopReason: "tool_use",
      },
    ]);
    await c.state.update("ada", { state: "running", context: "personal", holder: "dead-runner" });
    const survivor = c.runner("r2");
    survivor.start();
    await eventually(() => llm.requests.length > 0, "the survivor to run the agent");
    await eventually(async () => (await c.state.get("ada"))?.state === "idle", "the agent to go idle");
    const result = c.threads.entries("ada").find((entry) => entry.kind === "tool-result");
    expect(result).toMatchObject({ callId: "toolu_dead", interrupted: true, content: INTERRUPTED_CALL_CONTENT });
    expect((await c.lease.current("ada")) ?? null).toBeNull();
  });

  it("stops the loop when its lease is taken: the running call is aborted and nothing more is written", async () => {
    const llm = new ScriptedLlm(() => new Promise(() => {}));
    const c = track(cluster(llm));
    const runtime = c.runner("r1");
    await c.send("long task");
    await runtime.wake("ada");
    await eventually(() => llm.requests.length === 1, "the model call");
    const before = c.threads.entries("ada").length;
    c.lease.expire("ada");
    const thief = await c.lease.acquire("ada", "r2", 60_000);
    expect(thief).not.toBeNull();
    await runtime.settled("ada");
    expect(llm.calls[0]?.aborted).toBe(true);
    expect(c.threads.entries("ada")).toHaveLength(before);
    expect(await c.lease.current("ada")).toEqual({ holder: "r2", epoch: thief?.epoch });
  });

  it("answers control for the agent it runs: cancel ends the cycle, pause holds it, resume lets it go", async () => {
    const llm = new ScriptedLlm(async (_request, { index, signal }) => {
      if (index === 0) {
        await new Promise((_resolve, reject) => signal?.addEventListener("abort", () => reject(signal.reason)));
      }
      return textReply("done");
    });
    const c = track(cluster(llm));
    const runtime = c.runner("r1");
    await c.send("work");
    await runtime.wake("ada");
    await eventually(() => llm.requests.length === 1, "the model call");
    const canceled = await runtime.control("ada", "cancel", "operator said so");
    expect(canceled).toMatchObject({ ok: true, agent: "ada", op: "cancel" });
    expect(llm.calls[0]?.aborted).toBe(true);
    await runtime.settled("ada");
    const note = c.threads.entries("ada").find((entry) => entry.kind === "instruction");
    expect(note).toMatchObject({ status: "canceled" });

    expect(await runtime.control("ada", "pause")).toMatchObject({ ok: true, state: "paused" });
    await eventually(async () => (await c.state.get("ada"))?.state === "paused", "the agent to be paused");
    await c.send("while paused");
    await runtime.wake("ada");
    expect(llm.requests).toHaveLength(1);
    expect(await runtime.control("ada", "resume")).toMatchObject({ ok: true });
    await eventually(() => userText(llm.lastRequest).includes("while paused"), "the input after resume");
    expect(await runtime.control("ada", "cancel")).toMatchObject({ ok: false });
    await runtime.settled("ada");
    expect(runtime.tracked()).toEqual([]);
  });

  it("leaves control of an agent held elsewhere to its holder, and refuses unknown agents", async () => {
    const c = track(cluster(new ScriptedLlm(textReply(""))));
    await c.lease.acquire("ada", "elsewhere", 60_000);
    const runtime = c.runner("r1");
    expect(await runtime.control("ada", "pause")).toBeNull();
    expect(await runtime.control("bob", "pause")).toMatchObject({ ok: false, error: expect.stringContaining("bob") });
    // The refused pause leaves nothing behind that would hold a later run here.
    expect(runtime.tracked()).toEqual([]);
  });

  it("restarts a crashing loop under the policy, then leaves the agent in error until resumed", async () => {
    let fail = true;
    const llm = new ScriptedLlm(textReply("fine now"));
    const c = track(cluster(llm, { maxRestarts: 1 }));
    const { read, readIfHeld } = {
      read: c.threads.read.bind(c.threads),
      readIfHeld: c.threads.readIfHeld.bind(c.threads),
    };
    const unreachable = () => Promise.reject(new Error("thread store unreachable"));
    c.threads.read = (...args) => (fail ? unreachable() : read(...args));
    c.threads.readIfHeld = (...args) => (fail ? unreachable() : readIfHeld(...args));
    const runtime = c.runner("r1");
    runtime.start();
    await c.send("crash me");
    await runtime.wake("ada");
    await eventually(async () => {
      const record = await c.state.get("ada");
      return record?.state === "error" && record.restarts >= 1 && runtime.running().length === 0;
    }, "the agent to be given up");
    expect(await c.lease.current("ada")).toBeNull();
    expect(llm.requests).toHaveLength(0);
    fail = false;
    expect(await runtime.control("ada", "resume")).toMatchObject({ ok: true });
    await eventually(
      async () => (await c.state.get("ada"))?.state === "idle" && llm.requests.length > 0,
      "a healthy run",
    );
    expect(userText(llm.lastRequest)).toContain("crash me");
  });

  /** Runner r1 runs ada, whose first step calls `ls`; r1 is stopped while the call runs, then the call finishes. */
  async function stopMidToolCall(secondReply: string) {
    let finishTool: () => void = () => {};
    const toolDone = new Promise<void>((resolve) => {
      finishTool = resolve;
    });
    const tools = new FakeToolBus({
      message: () => "sent",
      ls: async () => {
        await toolDone;
        return "a.txt";
      },
    });
    const llm = new ScriptedLlm([toolReply(toolUse("ls", {}, "toolu_ls")), textReply(secondReply)]);
    const c = track(cluster(llm, { tools }));
    const runtime = c.runner("r1");
    await c.send("list");
    await runtime.wake("ada");
    await eventually(() => tools.calls.length === 1, "the tool call");
    const stopping = runtime.stop();
    finishTool();
    await stopping;
    return { c, llm, tools, runtime };
  }

  it("on stop, lets the running tool call finish, stops at the step boundary and releases the lease", async () => {
    const { c, llm, tools, runtime } = await stopMidToolCall("should not be called");
    const result = c.threads.entries("ada").find((entry) => entry.kind === "tool-result");
    expect(result).toMatchObject({ callId: "toolu_ls", content: "a.txt", isError: false });
    expect(llm.requests).toHaveLength(1);
    expect(tools.aborted).toEqual([]);
    expect(await c.lease.current("ada")).toBeNull();
    expect(await runtime.wake("ada")).toBe("stopping");
  });

  it("a runner shutting down mid-instruction leaves the agent stopped; another runner's sweeper resumes it from its thread", async () => {
    const { c, llm } = await stopMidToolCall("a.txt is there");

    const stopped = await c.state.get("ada");
    expect(stopped).toMatchObject({ state: "stopped", context: "personal" });
    expect(stopped?.holder).toBeUndefined();
    expect(await c.lease.current("ada")).toBeNull();
    expect(llm.requests).toHaveLength(1);

    const second = c.runner("r2");
    second.start();
    await eventually(async () => (await c.state.get("ada"))?.state === "idle", "r2 to finish the instruction");
    expect(llm.requests).toHaveLength(2);
    // The second request continues the thread: the tool result the first runner wrote is in it.
    expect(JSON.stringify(llm.requests[1]?.messages.at(-1))).toContain("a.txt");
    const states = c.state.states("ada");
    expect(states.slice(0, 3)).toEqual(["running", "paused", "stopped"]);
    expect(states.slice(3)).toContain("running");
    expect(states.at(-1)).toBe("idle");
  });
});
