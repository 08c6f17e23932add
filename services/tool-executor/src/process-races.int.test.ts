import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createSubjects, refusalText, type ToolCallEnvelope, workflowNotRunning } from "@moniro/envelopes";
import { createKeys, RedisWorkspaceStore } from "@moniro/store";
import { type TestRedis, testRedis } from "@moniro/store/test";
import { silentLogger } from "@moniro/telemetry";
import { execLimits, ProcessRegistry, resolvePolicy, runTool, type TeamPort } from "@moniro/tool-catalog";
import { processesWith, sleepMarker, testToolContext } from "@moniro/tool-catalog/test";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { AgentPolicyLookup } from "./agent-policies.js";
import { processPeersFor } from "./peer-processes.js";
import { type ExecutorFixture, executorFixture } from "./test/executor-fixture.js";
import { stopInstanceProcesses } from "./workspace-files.js";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

// Races of `process start` against what ends its processes (docs/tool-executor.md "Background processes over
// their lifetime"), made deterministic by landing the other side from inside the call. Real Redis (and NATS,
// bubblewrap).
describe("process start racing its instance's stop: the executors' set", () => {
  let t: TestRedis;
  let store: RedisWorkspaceStore;
  let root: string;
  let registry: ProcessRegistry;

  beforeEach(async () => {
    t = testRedis();
    store = new RedisWorkspaceStore(t.redis, { prefix: t.prefix });
    root = mkdtempSync(join(tmpdir(), "moniro-announce-"));
    chmodSync(root, 0o755);
    registry = new ProcessRegistry({ executorId: "exec-a", limits: execLimits({ killGraceMs: 300 }) });
    await store.instance("review", "main").start([{ name: "ada", agent: "ada", kind: "ref" }]);
  });
  afterEach(async () => {
    await registry.close();
    await t.cleanup();
    rmSync(root, { recursive: true, force: true });
  });

  /** Every key of the instance that exists in Redis. */
  async function instanceKeysLeft(): Promise<string[]> {
    const keys = Object.values(createKeys(t.prefix).workspace("review", "main"));
    const left: string[] = [];
    for (const key of keys) if ((await t.redis.exists(key)) === 1) left.push(key);
    return left;
  }

  /** `process start` by ada in review:main through the executor's own announce, `before` run just ahead of it. */
  function start(marker: string, before: () => Promise<void>) {
    const deps = { executorId: "exec-a", subjects: createSubjects("unused"), redis: t.redis, redisPrefix: t.prefix };
    const call = { agent: "ada", context: "review:main" } as ToolCallEnvelope;
    const real = processPeersFor(call, { ...deps, bus: { request: () => Promise.reject(new Error("unused")) } });
    const team: TeamPort = {
      store,
      publishInbound: async () => {},
      agentState: async () => undefined,
      directoryOf: (workflow, tag) => join(root, `${workflow}__${tag}`),
    };
    const ctx = testToolContext({ agent: "ada", context: "review:main", team, processes: registry });
    ctx.processPeers = {
      announce: async () => {
        await before();
        await real.announce();
      },
      list: real.list,
    };
    return runTool("process", { action: "start", command: `exec sleep ${marker}` }, ctx);
  }

  it("an ephemeral stop complete before the start announces its executor (set read and deleted, instance discarded): the start leaves no key of the instance in Redis", async () => {
    const marker = sleepMarker();
    const outcome = await start(marker, async () => {
      const instance = store.instance("review", "main");
      await instance.stop();
      await instance.discard();
      // What the executor answering ws.files remove does before the directory goes.
      await stopInstanceProcesses(
        {
          executorId: "exec-b",
          subjects: createSubjects("unused"),
          bus: { request: () => Promise.reject(new Error("no executor to ask")) },
          redis: t.redis,
          redisPrefix: t.prefix,
          processes: new ProcessRegistry({ executorId: "exec-b", limits: execLimits() }),
          limits: execLimits(),
          logger: silentLogger,
        },
        "review",
        "main",
      );
      expect(await instanceKeysLeft()).toEqual([]);
    });

    expect(outcome).toMatchObject({
      isError: true,
      errorCode: "workflow_not_running",
      content: refusalText(workflowNotRunning("review", "main")),
    });
    expect(processesWith(marker)).toEqual([]);
    expect(await instanceKeysLeft()).toEqual([]);
  });

  it("while the instance runs, the start announces its executor in the instance's set (what the stop reads)", async () => {
    const marker = sleepMarker();
    const outcome = await start(marker, async () => {});
    expect(outcome.isError).toBeUndefined();
    const key = createKeys(t.prefix).workspace("review", "main").processExecutors;
    expect(await t.redis.smembers(key)).toEqual(["exec-a"]);
  });
});

describe("process start racing its agent's deletion", () => {
  let world: ExecutorFixture;

  beforeEach(async () => {
    world = await executorFixture({ ada: "name: ada\nmodel: mock\n" });
  });
  afterEach(async () => {
    await world.cleanup();
  });

  it("the deletion is heard after the call passed the agent's lookup and before the spawn: no process runs, the call says why, and once the agent is defined again a start runs", async () => {
    type Listener = (change: { name: string; record: unknown }) => void;
    const listeners: Listener[] = [];
    const heard = (change: { name: string; record: unknown }) => {
      for (const listener of listeners) listener(change);
    };
    let deleteOnLookup = true;
    const app = await world.startExecutor({
      policies: {
        async lookup(): Promise<AgentPolicyLookup> {
          const found: AgentPolicyLookup = { ok: true, policy: resolvePolicy({}) };
          // Found; then the registry watch delivers the deletion, and the executor acts on it, before the spawn.
          if (deleteOnLookup) {
            deleteOnLookup = false;
            heard({ name: "ada", record: undefined });
          }
          return found;
        },
      },
      agentChanges: (listener) => {
        listeners.push(listener);
        return () => {};
      },
    });
    const marker = sleepMarker();
    const start = (command: string) =>
      world.call(world.callEnvelope("process", { action: "start", command }, { agent: "ada" }));

    const refused = await start(`exec sleep ${marker}`);

    expect(deleteOnLookup).toBe(false);
    await sleep(200);
    expect(processesWith(marker)).toEqual([]);
    expect(app.processes.list("ada").filter((info) => info.status === "running")).toEqual([]);
    expect(refused).toMatchObject({ isError: true, errorCode: "unknown-agent" });
    expect(refused.content).toContain("agent 'ada' was deleted while this call ran");

    heard({ name: "ada", record: { name: "ada" } });
    const again = sleepMarker();
    const started = await start(`exec sleep ${again}`);
    expect(started, JSON.stringify(started.content)).toMatchObject({ isError: false });
    // The sandbox's shell runs the command after its start gate: its line shows a moment after the answer.
    for (let i = 0; i < 200 && processesWith(again).length === 0; i++) await sleep(25);
    expect(processesWith(again)).not.toEqual([]);
  });
});
