import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { processStopReplySchema, type WorkspaceFilesReply, workspaceFilesReplySchema } from "@moniro/envelopes";
import { AgentRegistry, deleteRegistryBuckets } from "@moniro/registry";
import { createKeys, RedisWorkspaceStore } from "@moniro/store";
import { processesWith, sleepMarker } from "@moniro/tool-catalog/test";
import { jetstreamManager } from "@nats-io/jetstream";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { agentPoliciesFromRegistry } from "./registry-policies.js";
import { type ExecutorFixture, executorFixture } from "./test/executor-fixture.js";

type App = Awaited<ReturnType<ExecutorFixture["startExecutor"]>>;

async function until(condition: () => boolean, what: string, tries = 200): Promise<void> {
  for (let i = 0; i < tries && !condition(); i++) await new Promise((resolve) => setTimeout(resolve, 25));
  if (!condition()) throw new Error(`gave up waiting for ${what}`);
}

// Who may reach a background process, and what becomes of it when its workspace instance stops or its
// agent is deleted (docs/tool-executor.md "Background processes over their lifetime"). Two executors, real
// NATS, Redis and bubblewrap.
describe("background processes: ownership and lifetime", () => {
  let world: ExecutorFixture;
  let store: RedisWorkspaceStore;
  let executors: App[];

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
    executors = [await world.startExecutor(), await world.startExecutor()];
  });
  afterEach(async () => {
    await world.cleanup();
  });

  const processCall = (agent: string, context: string, input: Record<string, unknown>) =>
    world.call(world.callEnvelope("process", input, { agent, context }));

  /** Starts `command` as `agent` in `context` through the queue group; the process id and the executor it landed on. */
  async function start(agent: string, context: string, command: string) {
    const started = await processCall(agent, context, { action: "start", command });
    expect(started, JSON.stringify(started.content)).toMatchObject({ isError: false });
    return { processId: (started.data as { processId: string }).processId, executorId: String(started.executorId) };
  }

  /** Starts processes until each executor holds at least one (the queue group picks one at random). */
  async function startOnBoth(agent: string, context: string, command: (n: number) => string) {
    const started: Array<{ processId: string; executorId: string }> = [];
    for (let n = 0; n < 8; n++) {
      started.push(await start(agent, context, command(n)));
      if (executors.every((app) => started.some((one) => one.executorId === app.executorId))) return started;
    }
    throw new Error("the queue group gave every start to one executor");
  }

  function wsFiles(op: "remove" | "stop", workflow: string, tag: string): Promise<WorkspaceFilesReply> {
    return world.nc
      .request(world.subjects.wsFiles, JSON.stringify({ op, workflow, tag }), { timeout: 15_000 })
      .then((message) => workspaceFilesReplySchema.parse(message.json()));
  }

  /** What the gateway does at a stop (docs/workflows.md "Instances"): marked stopped, discarded, the directory removed. */
  async function stopEphemeral(workflow: string, tag: string): Promise<WorkspaceFilesReply> {
    const instance = store.instance(workflow, tag);
    await instance.stop();
    await instance.discard();
    return wsFiles("remove", workflow, tag);
  }

  it("a malformed or forged stop request on <ns>.tool.procstop.<executorId> is refused, naming the fields, and stops nothing", async () => {
    const marker = sleepMarker();
    const { processId, executorId } = await start("ada", "review:main", `exec sleep ${marker}`);
    await until(() => processesWith(marker).length > 0, "the process to run");
    for (const body of [
      '{"workflow":"review","tag":"*"}',
      '{"workflow":"review","tag":"main","reason":"x","all":true}',
      "not json",
    ]) {
      const reply = processStopReplySchema.parse(
        (await world.nc.request(world.subjects.toolProcStop(executorId), body, { timeout: 5_000 })).json(),
      );
      expect(reply, body).toMatchObject({ ok: false });
      if (body.startsWith("{")) expect((reply as { message: string }).message, body).toMatch(/tag|reason|all/);
    }
    expect(processesWith(marker)).not.toEqual([]);
    const polled = await processCall("ada", "review:main", { action: "poll", processId });
    expect(polled).toMatchObject({ isError: false, data: { status: "running" } });
  });

  it("another agent cannot poll, log, write to or kill a process by its id, on its owner or forwarded by the other executor", async () => {
    const marker = sleepMarker();
    const { processId } = await start("ada", "personal", `cat > got.txt; sleep ${marker}`);
    for (const [action, extra] of [
      ["poll", {}],
      ["log", {}],
      ["write", { input: "from bob\n", close: true }],
      ["kill", {}],
    ] as const) {
      // Sent twice on the queue group: with two executors, one of the tries is almost surely forwarded.
      for (let i = 0; i < 4; i++) {
        const stolen = await processCall("bob", "personal", { action, processId, ...extra });
        expect(stolen, action).toMatchObject({ isError: true, errorCode: "process-not-found" });
      }
    }
    expect((await processCall("bob", "personal", { action: "list" })).data).toEqual({ processes: [] });
    expect(processesWith(marker)).not.toHaveLength(0);
    expect(readFileSync(join(world.workspacesDir, "ada", "got.txt"), "utf8")).toBe("");
  });

  it("a process is reached only from the context it was started in: not from the agent's personal context, nor by a non-member or another member", async () => {
    const inWorkspace = await start("ada", "review:main", `sleep ${sleepMarker()}`);
    const inPersonal = await start("ada", "personal", `sleep ${sleepMarker()}`);
    for (const action of ["poll", "log", "kill"] as const) {
      const fromPersonal = await processCall("ada", "personal", { action, processId: inWorkspace.processId });
      expect(fromPersonal, action).toMatchObject({ isError: true, errorCode: "process-other-context" });
      expect(fromPersonal.content).toContain(
        `background process '${inWorkspace.processId}' was started in workspace review:main, and this call runs in your personal context`,
      );
      const fromWorkspace = await processCall("ada", "review:main", { action, processId: inPersonal.processId });
      expect(fromWorkspace, action).toMatchObject({ isError: true, errorCode: "process-other-context" });
      const byMember = await processCall("bob", "review:main", { action, processId: inWorkspace.processId });
      expect(byMember, action).toMatchObject({ isError: true, errorCode: "process-not-found" });
      const byOutsider = await processCall("eve", "review:main", { action, processId: inWorkspace.processId });
      expect(byOutsider, action).toMatchObject({ isError: true, errorCode: "not_a_member" });
    }
    const listed = (context: string) =>
      processCall("ada", context, { action: "list" }).then((done) =>
        (done.data as { processes: Array<{ processId: string }> }).processes.map((one) => one.processId),
      );
    expect(await listed("personal")).toEqual([inPersonal.processId]);
    expect(await listed("review:main")).toEqual([inWorkspace.processId]);
    // Both still run: nothing above reached them.
    for (const { processId } of [inWorkspace, inPersonal]) {
      const context = processId === inWorkspace.processId ? "review:main" : "personal";
      expect((await processCall("ada", context, { action: "poll", processId })).data).toMatchObject({
        status: "running",
      });
    }
  });

  it("an ephemeral instance's stop ends its members' processes on every executor (TERM, then KILL) before its directory goes; a call about one says the instance stopped", async () => {
    const shared = join(world.workspacesDir, "review__main");
    const markers: string[] = [];
    // A loop that writes into the shared directory, and one that ignores SIGTERM (the kill grace ends it).
    const loop = (n: number) => {
      const marker = sleepMarker(0);
      markers.push(marker);
      return n % 2 === 0
        ? `while :; do date +%s%N >> tick-${n}.log; sleep ${marker}; done`
        : `trap '' TERM; while :; do sleep ${marker}; done`;
    };
    const adas = await startOnBoth("ada", "review:main", loop);
    const bobs = [await start("bob", "review:main", loop(100))];
    const personal = await start("ada", "personal", `sleep ${sleepMarker()}`);
    await until(() => existsSync(join(shared, "tick-0.log")), "the loop's first line");
    for (const marker of markers) expect(processesWith(marker), marker).not.toHaveLength(0);

    const removed = await stopEphemeral("review", "main");
    expect(removed).toEqual({ ok: true, outputs: {} });
    // By the time the directory is reported gone, nothing started there runs on either executor.
    for (const marker of markers) expect(processesWith(marker), marker).toEqual([]);
    expect(existsSync(shared)).toBe(false);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(existsSync(shared)).toBe(false);
    // The index of the executors to ask is gone with the instance.
    const key = createKeys(world.redis.prefix).workspace("review", "main").processExecutors;
    expect(await world.redis.redis.exists(key)).toBe(0);
    // They free the agent's slots: only the personal process still runs, on whichever executor.
    const running = executors.flatMap((app) => app.processes.list("ada")).filter((info) => info.status === "running");
    expect(running.map((info) => info.processId)).toEqual([personal.processId]);

    for (const { processId } of [...adas, ...bobs]) {
      const agent = bobs.some((one) => one.processId === processId) ? "bob" : "ada";
      const inWorkspace = await processCall(agent, "review:main", { action: "poll", processId });
      expect(inWorkspace).toMatchObject({ isError: true, errorCode: "workflow_not_running" });
      expect(inWorkspace.content).toBe(
        `Process ${processId} was stopped because its workspace review:main stopped.\nworkflow "review" is not running.\nStart it with: moniro start review`,
      );
      const fromPersonal = await processCall(agent, "personal", { action: "write", processId, input: "x" });
      expect(fromPersonal).toMatchObject({ isError: true, errorCode: "process-other-context" });
      expect(fromPersonal.content).toContain(
        `Process ${processId} was stopped because its workspace review:main stopped.`,
      );
    }
    expect(
      (await processCall("ada", "personal", { action: "poll", processId: personal.processId })).data,
    ).toMatchObject({ status: "running" });
  });

  it("a persistent instance's stop ends its processes too and keeps the directory; the next start's members find them stopped", async () => {
    const shared = join(world.workspacesDir, "review__main");
    const marker = sleepMarker();
    const { processId } = await start("ada", "review:main", `echo kept > kept.txt; sleep ${marker}`);
    await until(() => existsSync(join(shared, "kept.txt")), "kept.txt");
    await store.instance("review", "main").stop();
    expect(await wsFiles("stop", "review", "main")).toEqual({ ok: true, outputs: {} });
    expect(processesWith(marker)).toEqual([]);
    expect(readFileSync(join(shared, "kept.txt"), "utf8")).toBe("kept\n");
    await store.instance("review", "main").start([{ name: "ada", agent: "ada", kind: "ref" }]);
    const polled = await processCall("ada", "review:main", { action: "poll", processId });
    expect(polled.data).toMatchObject({
      processId,
      status: "killed",
      stoppedBecause: "its workspace review:main stopped",
    });
  });

  it("an agent deleted from the registry has its background processes stopped on every executor, in every context", async () => {
    const registry = await AgentRegistry.open(world.nc, { namespace: world.namespace });
    const watching: AgentRegistry[] = [];
    try {
      for (const name of ["ada", "bob"]) await registry.put(name, { name, model: "mock" }, { source: "api" });
      // Two executors reading the live registry, as the service does (main.ts).
      await Promise.all(executors.map((app) => app.stop(0)));
      executors = [];
      for (let i = 0; i < 2; i++) {
        const own = await AgentRegistry.open(world.nc, { namespace: world.namespace });
        watching.push(own);
        executors.push(
          await world.startExecutor({
            policies: agentPoliciesFromRegistry(own),
            agentChanges: (listener) => own.onChange(listener),
          }),
        );
      }
      const markers: string[] = [];
      const sleeper = () => {
        markers.push(sleepMarker());
        return `sleep ${markers.at(-1)}`;
      };
      await startOnBoth("ada", "personal", sleeper);
      await start("ada", "review:main", sleeper());
      const bobs = sleepMarker();
      await start("bob", "personal", `sleep ${bobs}`);

      await registry.remove("ada");
      await until(() => markers.every((marker) => processesWith(marker).length === 0), "ada's processes to end");
      expect(processesWith(bobs)).not.toHaveLength(0);
      for (const app of executors) {
        for (const info of app.processes.list("ada")) {
          expect(info).toMatchObject({ status: "killed", stoppedBecause: "its agent ada was deleted" });
        }
      }
    } finally {
      for (const own of watching) own.close();
      registry.close();
      await deleteRegistryBuckets(await jetstreamManager(world.nc), world.namespace);
    }
  });
});
