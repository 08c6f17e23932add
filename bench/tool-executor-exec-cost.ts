import { existsSync, readFileSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import { NatsToolBus } from "@moniro/agent-runner";
import { createBus } from "@moniro/bus";
import { createSubjects, stamp, type ToolCallEnvelope } from "@moniro/envelopes";
import { connect } from "@nats-io/transport-node";
import { NATS_URL } from "./support/bench-runner.js";
import { clockTicksPerSecond, kernelThreadsCpu, machineCpuMs } from "./support/proc.js";
import { randomToken } from "./support/random.js";
import { ms, report } from "./support/report.js";
import { startServiceStack } from "./support/service-stack.js";

const CALLS = 300;
const WARMUP = 30;
const GOAL_MS = 5;
/** The throughput bench's shape without its overload: this many `exec sleep 0.2` at once, never more than the executor's slots. */
const CONCURRENT = 4;
const CONCURRENT_CALLS = 100;

/** utime + stime (the process itself) and cutime + cstime (its reaped children), in ms. */
function cpuOf(pid: number): { self: number; children: number } {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  const ms = (index: number) => (Number(fields[index]) * 1000) / clockTicksPerSecond();
  return { self: ms(11) + ms(12), children: ms(13) + ms(14) };
}

/**
 * Issue 17: the tool-executor's CPU per `exec` call, the command excluded.
 * One real executor process runs CALLS sequential `exec true` calls in the
 * sandbox (bwrap, prlimit, bash); its own CPU (utime + stime of every
 * thread, from /proc/<pid>/stat) per call is the figure the goal is about.
 * Next to it: the CPU of its reaped children (bwrap, the sandbox's init,
 * bash: cutime + cstime), which is bubblewrap's own setup plus the `true`,
 * and the same executor's CPU per `ls` call (a tool without a process), so
 * the spawn's share is visible.
 */
export async function run(): Promise<void> {
  const stack = await startServiceStack({
    registerAgents: true,
    agents: { ada: "name: ada\nmodel: mock\nbackend: mock\n" },
    env: { MONIRO_LOG_LEVEL: "warn" },
  });
  const nc = await connect({ servers: NATS_URL });
  try {
    const executor = await stack.start("tool-executor");
    const tools = new NatsToolBus(createBus(nc), createSubjects(stack.namespace));
    const call = (tool: string, input: Record<string, unknown>): ToolCallEnvelope => ({
      ...stamp(),
      callId: randomToken("c"),
      agent: "ada",
      context: "personal",
      tool,
      input,
      deadlineMs: Date.now() + 10_000,
    });
    const first = await tools.call(call("exec", { command: "true" }));
    const sandbox = (first.data as { sandbox?: { kind?: string } } | undefined)?.sandbox?.kind;
    if (first.isError || sandbox !== "bubblewrap") {
      throw new Error(`exec true did not run in the sandbox (sandbox: ${sandbox}): ${first.content}`);
    }
    const measure = async (tool: string, input: Record<string, unknown>, calls = CALLS, parallel = 1) => {
      for (let i = 0; i < WARMUP; i++) await tools.call(call(tool, input));
      const before = cpuOf(executor.pid);
      const orphans0 = cpuOf(1).children;
      const kernelCpu = kernelThreadsCpu();
      const machine0 = machineCpuMs();
      const t0 = performance.now();
      let started = 0;
      await Promise.all(
        Array.from({ length: parallel }, async () => {
          while (started < calls) {
            started++;
            const result = await tools.call(call(tool, input));
            if (result.isError) throw new Error(`${tool} failed: ${result.content}`);
          }
        }),
      );
      const wall = (performance.now() - t0) / calls;
      const after = cpuOf(executor.pid);
      const orphans = (cpuOf(1).children - orphans0) / calls;
      const kernel = kernelCpu() / calls;
      const machine1 = machineCpuMs();
      const busy = (machine1.busy - machine0.busy) / (machine1.total - machine0.total);
      return {
        self: (after.self - before.self) / calls,
        children: (after.children - before.children) / calls,
        orphans,
        kernel,
        busy,
        wall,
      };
    };
    if (!existsSync("/proc/1/stat")) throw new Error("/proc/1/stat is not readable: this bench needs Linux /proc");
    const load0 = loadavg()[0] ?? Number.NaN;
    const exec = await measure("exec", { command: "true" });
    const ls = await measure("ls", {});
    const sleeps = await measure("exec", { command: "sleep 0.2" }, CONCURRENT_CALLS, CONCURRENT);
    report({
      benchmark: "tool-executor-exec-cost",
      title: "Tool-executor CPU per sandboxed `exec true` call (the executor process, the command excluded)",
      rows: [
        {
          metric: "executor CPU per exec call",
          value: ms(exec.self),
          goal: `≤ ${GOAL_MS} ms`,
          met: exec.self <= GOAL_MS,
        },
        { metric: "  of which any tool call costs (ls of an empty dir)", value: ms(ls.self) },
        { metric: "children's CPU per exec call (bwrap's outer process)", value: ms(exec.children) },
        {
          metric: "orphans' CPU per call, exec / ls (the sandbox's init, bash, true; machine-wide)",
          value: `${ms(exec.orphans)} / ${ms(ls.orphans)}`,
        },
        {
          metric: "kernel threads' CPU per call, exec / ls (machine-wide)",
          value: `${ms(exec.kernel)} / ${ms(ls.kernel)}`,
        },
        { metric: "wall time per exec call (sequential)", value: ms(exec.wall) },
        {
          metric: `executor CPU per exec sleep 0.2 call, ${CONCURRENT} at once (no refusals)`,
          value: ms(sleeps.self),
          goal: `≤ ${GOAL_MS} ms`,
          met: sleeps.self <= GOAL_MS,
        },
        {
          metric: "machine CPU busy during exec / ls runs",
          value: `${(exec.busy * 100).toFixed(0)}% / ${(ls.busy * 100).toFixed(0)}%`,
        },
        { metric: "1-min load before / cores", value: `${load0.toFixed(2)} / ${cpus().length}` },
      ],
      notes: [
        `${CALLS} sequential calls of each tool after ${WARMUP} warm-up, one executor process, default limits, no network; then ${CONCURRENT_CALLS} \`exec sleep 0.2\` calls ${CONCURRENT} at a time (the throughput bench's calls, without its overload and busy refusals).`,
        "Executor CPU: utime + stime of the executor process (all its threads) from /proc/<pid>/stat, divided by the calls. It includes the fork of the executor (page tables copied, copy-on-write faults after), which grows with the executor's RSS.",
        "Children's CPU: the growth of the executor's cutime + cstime, i.e. what the executor reaps: bwrap's outer process (namespaces, mounts, the mount table it parses per bind). bwrap exits as soon as its init reports the command's exit code, without reaping that init: the init and what it reaped (bash with its ulimit and start gate, and `true`) are re-parented to PID 1 and counted in PID 1's cutime + cstime (the orphans row). That is machine-wide: on a shared machine others' orphans are in it, compare the exec and ls rows.",
        "Kernel threads: kworkers and the like, charged to no process; tearing down each call's network namespace runs there. Machine-wide, so on a shared machine it includes others' work (compare the exec and ls rows), and a lower bound (a kworker that exits during the run takes its time with it).",
      ],
    });
  } finally {
    await nc.close();
    await stack.stop();
  }
}
