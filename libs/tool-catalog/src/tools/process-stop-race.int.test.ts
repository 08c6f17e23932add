import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { refusalText, workflowNotRunning } from "@moniro/envelopes";
import { type NamedMember, RedisWorkspaceStore, type WorkspaceStore } from "@moniro/store";
import { type TestRedis, testRedis } from "@moniro/store/test";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { execLimits } from "../limits.js";
import { type ProcessInfo, ProcessRegistry } from "../process/process-registry.js";
import { runTool } from "../run-tool.js";
import { processesWith, sleepMarker } from "../test/processes.js";
import { testToolContext } from "../test/test-context.js";
import type { ProcessPeers, TeamPort } from "../tool.js";

const MEMBERS: NamedMember[] = [{ name: "ada", agent: "ada", kind: "ref" }];
const REFUSAL = refusalText(workflowNotRunning("review", "main"));
const STOPPED = "its workspace review:main stopped";
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A registry that runs `afterSpawn` once a process is spawned and registered (start is synchronous). */
class HookedRegistry extends ProcessRegistry {
  afterSpawn: (info: ProcessInfo) => void = () => {};
  override start(...args: Parameters<ProcessRegistry["start"]>): ProcessInfo {
    const info = super.start(...args);
    this.afterSpawn(info);
    return info;
  }
}

// `process start` in a workspace context against its instance's stop (docs/tool-executor.md "Background
// processes over their lifetime"): the stop lands after the start took its seat, at the two points where the
// stop itself cannot reach the new process, made deterministic by stopping the instance from inside the
// call. The start reads the instance again after its spawn and kills its process. Real Redis and bubblewrap.
describe("process start racing its instance's stop", () => {
  let t: TestRedis;
  let store: RedisWorkspaceStore;
  let root: string;
  let registry: HookedRegistry;

  beforeEach(async () => {
    t = testRedis();
    store = new RedisWorkspaceStore(t.redis, { prefix: t.prefix });
    root = mkdtempSync(join(tmpdir(), "moniro-race-"));
    // The sandbox runs commands as nobody when the tests run as root: it must reach the workspace (mkdtemp is 0700).
    chmodSync(root, 0o755);
    registry = new HookedRegistry({ executorId: "exec-test", limits: execLimits({ killGraceMs: 300 }) });
    await store.instance("review", "main").start(MEMBERS);
  });
  afterEach(async () => {
    for (const info of registry.list("ada")) {
      if (info.status === "running") await registry.kill("ada", info.processId);
    }
    await t.cleanup();
    rmSync(root, { recursive: true, force: true });
  });

  /** A `process start` of `sleep <marker>` by ada in review:main, with the given store and peers. */
  function start(marker: string, options: { store?: WorkspaceStore; peers?: ProcessPeers } = {}) {
    const team: TeamPort = {
      store: options.store ?? store,
      publishInbound: async () => {},
      agentState: async () => undefined,
      directoryOf: (workflow, tag) => join(root, `${workflow}__${tag}`),
    };
    const ctx = testToolContext({ agent: "ada", context: "review:main", team, processes: registry });
    if (options.peers !== undefined) ctx.processPeers = options.peers;
    return runTool("process", { action: "start", command: `echo spawned > spawned.txt; exec sleep ${marker}` }, ctx);
  }

  it("the instance stops and is discarded after the seat, before the start announces itself (the stop found no executor to ask): the process started is killed, listed with the instance's stop as its reason, and the call says the instance is not running", async () => {
    const marker = sleepMarker();
    let stoppedBeforeSpawn = false;
    const peers: ProcessPeers = {
      // The gateway's ephemeral stop, complete, in the window: marked stopped, discarded, and this executor's
      // own stop of the context has run (finding nothing: the process is not spawned yet).
      async announce() {
        const instance = store.instance("review", "main");
        await instance.stop();
        await instance.discard();
        expect(await registry.stopContext("review:main", "its workspace review:main stopped")).toEqual([]);
        stoppedBeforeSpawn = true;
      },
      list: async () => [],
    };
    let spawned: ProcessInfo | undefined;
    registry.afterSpawn = (info) => {
      spawned = info;
    };

    const outcome = await start(marker, { peers });

    expect(stoppedBeforeSpawn).toBe(true);
    expect(spawned?.status).toBe("running");
    expect(outcome).toMatchObject({ isError: true, errorCode: "workflow_not_running", content: REFUSAL });
    // Killed and waited for before the answer: nothing of it runs, and it holds no slot.
    expect(processesWith(marker)).toEqual([]);
    const [listed] = registry.list("ada");
    // Listed as those its instance's stop ended are, with the reason a later call is told.
    expect(listed).toMatchObject({
      processId: spawned?.processId,
      context: "review:main",
      status: "killed",
      stoppedBecause: STOPPED,
    });
    expect(registry.list("ada").filter((info) => info.status === "running")).toEqual([]);
  });

  it("the instance stops after the spawn, before the start reads it again: the process is killed, listed with the instance's stop as its reason, and the call says the instance is not running", async () => {
    const marker = sleepMarker();
    let stop: Promise<unknown> | undefined;
    registry.afterSpawn = () => {
      stop = store.instance("review", "main").stop();
    };
    // The re-read waits for the stop that began right after the spawn: it lands between the two reads.
    const hooked = new Proxy(store, {
      get(target, property, receiver) {
        if (property !== "instance") return Reflect.get(target, property, receiver);
        return (workflow: string, tag: string) =>
          new Proxy(target.instance(workflow, tag), {
            get(instance, name, self) {
              if (name !== "state") return Reflect.get(instance, name, self);
              return async () => {
                await stop;
                return instance.state();
              };
            },
          });
      },
    });

    const outcome = await start(marker, { store: hooked });

    expect(stop).toBeDefined();
    expect(outcome).toMatchObject({ isError: true, errorCode: "workflow_not_running", content: REFUSAL });
    expect(processesWith(marker)).toEqual([]);
    expect(registry.list("ada").map(({ status, stoppedBecause }) => ({ status, stoppedBecause }))).toEqual([
      { status: "killed", stoppedBecause: STOPPED },
    ]);
  });

  it("without a stop the same start keeps its process running (the hooks alone change nothing)", async () => {
    const marker = sleepMarker();
    const outcome = await start(marker, { peers: { announce: async () => {}, list: async () => [] } });
    expect(outcome.isError).toBeUndefined();
    // The sandbox's shell runs the command after its start gate: its line shows a moment after the answer.
    for (let i = 0; i < 200 && processesWith(marker).length === 0; i++) await sleep(25);
    expect(processesWith(marker)).not.toEqual([]);
    expect(registry.list("ada").map((info) => info.status)).toEqual(["running"]);
  });

  it("the instance stops and its directory is removed after a call took its seat, before the call makes sure the directory exists: the call leaves no directory behind and says the instance is not running", async () => {
    const shared = join(root, "review__main");
    mkdirSync(shared);
    let stopped = false;
    // The gateway's ephemeral stop, complete, right after the seat read the instance running.
    const hooked = new Proxy(store, {
      get(target, property, receiver) {
        if (property !== "instance") return Reflect.get(target, property, receiver);
        return (workflow: string, tag: string) =>
          new Proxy(target.instance(workflow, tag), {
            get(instance, name, self) {
              if (name !== "state") return Reflect.get(instance, name, self);
              return async () => {
                const state = await instance.state();
                if (!stopped && state?.status === "running") {
                  stopped = true;
                  await instance.stop();
                  await instance.discard();
                  rmSync(shared, { recursive: true, force: true });
                }
                return state;
              };
            },
          });
      },
    });
    const team: TeamPort = {
      store: hooked,
      publishInbound: async () => {},
      agentState: async () => undefined,
      directoryOf: (workflow, tag) => join(root, `${workflow}__${tag}`),
    };
    const ctx = testToolContext({ agent: "ada", context: "review:main", team, processes: registry });

    const outcome = await runTool("ls", {}, ctx);

    expect(stopped).toBe(true);
    expect(existsSync(shared)).toBe(false);
    expect(outcome).toMatchObject({ isError: true, errorCode: "workflow_not_running", content: REFUSAL });
  });

  it("a call whose instance's directory is missing while the instance runs makes it, as before", async () => {
    const shared = join(root, "review__main");
    const team: TeamPort = {
      store,
      publishInbound: async () => {},
      agentState: async () => undefined,
      directoryOf: (workflow, tag) => join(root, `${workflow}__${tag}`),
    };
    const outcome = await runTool("ls", {}, testToolContext({ agent: "ada", context: "review:main", team }));
    expect(outcome.isError).toBeUndefined();
    expect(existsSync(shared)).toBe(true);
  });
});
