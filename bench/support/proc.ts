import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";

let ticksPerSecond: number | undefined;

/** CLK_TCK: the unit of utime/stime in /proc/<pid>/stat (100 on Linux x86-64). */
export function clockTicksPerSecond(): number {
  if (ticksPerSecond === undefined) {
    try {
      ticksPerSecond = Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100;
    } catch {
      ticksPerSecond = 100;
    }
  }
  return ticksPerSecond;
}

/**
 * The fields of a /proc `stat` file after "pid (comm) ": index 0 is field 3 (state), so field n of
 * proc(5) is index n - 3 (minflt 10 → 7, utime 14 → 11, stime 15 → 12, ppid 4 → 1).
 */
function statFields(path: string): string[] {
  const stat = readFileSync(path, "utf8");
  return stat.slice(stat.lastIndexOf(")") + 2).split(" ");
}

/** CPU time (user + system) a process has used so far, in ms, from /proc/<pid>/stat. */
export function cpuMs(pid: number): number {
  const fields = statFields(`/proc/${pid}/stat`);
  const ticks = Number(fields[11]) + Number(fields[12]);
  return (ticks * 1000) / clockTicksPerSecond();
}

/** CPU time (user + system, ms) of a process's main thread alone (`/proc/<pid>/task/<pid>/stat`); the rest is V8's and libuv's threads. */
export function mainThreadCpuMs(pid: number): number {
  const fields = statFields(`/proc/${pid}/task/${pid}/stat`);
  const ticks = Number(fields[11]) + Number(fields[12]);
  return (ticks * 1000) / clockTicksPerSecond();
}

/** Minor page faults a process has taken so far (`minflt`, field 10 of /proc/<pid>/stat; its threads' included). */
export function minorFaults(pid: number): number {
  return Number(statFields(`/proc/${pid}/stat`)[7]);
}

/**
 * What one minor page fault costs this machine (µs of system time): the lowest of three runs that
 * touch every page of 64 MiB of fresh anonymous memory in this process. On a VM the host may back
 * each newly touched page itself, so this varies between machines (and boots) more than a syscall.
 */
export function pageFaultCostUs(): number {
  const bytes = 64 * 1024 * 1024;
  let best = Number.POSITIVE_INFINITY;
  for (let round = 0; round < 3; round++) {
    const faults0 = minorFaults(process.pid);
    const before = process.cpuUsage();
    // allocUnsafeSlow: a fresh allocation of its own (mmap'd, untouched), not a slice of Node's pool.
    Buffer.allocUnsafeSlow(bytes).fill(1);
    const systemUs = process.cpuUsage(before).system;
    const faults = minorFaults(process.pid) - faults0;
    if (faults > 0) best = Math.min(best, systemUs / faults);
  }
  return best;
}

/** Resident memory (VmRSS) of a process in bytes, from /proc/<pid>/status. */
export function rssBytes(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = /^VmRSS:\s+(\d+)\s+kB/m.exec(status)?.[1];
  return Number(kb ?? Number.NaN) * 1024;
}

/** Stops a child this process started: SIGTERM, SIGKILL after `graceMs`; resolves once it exited. */
export async function terminate(child: ChildProcess, graceMs = 5_000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once("exit", resolve));
  const timer = setTimeout(() => child.kill("SIGKILL"), graceMs);
  child.kill("SIGTERM");
  await exited;
  clearTimeout(timer);
}

/** RSS of a Node process that loads nothing: the floor each service process starts from. */
export async function bareNodeRss(): Promise<number> {
  const child = spawn(process.execPath, ["-e", "setInterval(() => {}, 1000)"], { stdio: "ignore" });
  try {
    await sleep(500);
    return rssBytes(child.pid ?? -1);
  } finally {
    child.kill("SIGKILL");
  }
}

/** utime + stime (clock ticks) of each kernel thread (kthreadd and its children) alive now. */
function kernelThreadTicks(): Map<string, number> {
  const ticks = new Map<string, number>();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    let fields: string[];
    try {
      fields = statFields(`/proc/${entry}/stat`);
    } catch {
      continue; // gone meanwhile
    }
    if (entry === "2" || fields[1] === "2") ticks.set(entry, Number(fields[11]) + Number(fields[12]));
  }
  return ticks;
}

/**
 * Measures the CPU time (ms) the kernel's own threads (kworkers, ksoftirqd, rcu) use from now until the
 * returned function is called: work the kernel does on behalf of processes without charging them, such
 * as tearing down a network namespace. Machine-wide (on a shared machine it includes everyone's share),
 * and a lower bound: a kworker that exits meanwhile takes its time with it.
 */
export function kernelThreadsCpu(): () => number {
  const before = kernelThreadTicks();
  return () => {
    let ticks = 0;
    for (const [pid, now] of kernelThreadTicks()) ticks += Math.max(0, now - (before.get(pid) ?? 0));
    return (ticks * 1000) / clockTicksPerSecond();
  };
}

/** Busy and total CPU time of the whole machine so far (ms, all cores), from /proc/stat. */
export function machineCpuMs(): { busy: number; total: number } {
  const line = readFileSync("/proc/stat", "utf8").split("\n", 1)[0] ?? "";
  const values = line.trim().split(/\s+/).slice(1).map(Number);
  // user nice system idle iowait irq softirq steal (guest time is already inside user and nice).
  const total = values.slice(0, 8).reduce((sum, value) => sum + value, 0);
  const idle = (values[3] ?? 0) + (values[4] ?? 0);
  const ms = (ticks: number) => (ticks * 1000) / clockTicksPerSecond();
  return { busy: ms(total - idle), total: ms(total) };
}

/** Read and write system calls a process has made so far (`syscr`, `syscw` of /proc/<pid>/io): socket reads and writes count. */
export function syscalls(pid: number): { reads: number; writes: number } {
  const io = readFileSync(`/proc/${pid}/io`, "utf8");
  const field = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+)`, "m").exec(io)?.[1] ?? Number.NaN);
  return { reads: field("syscr"), writes: field("syscw") };
}
