import type { ChildProcess } from "node:child_process";
import { groupAlive, killTree } from "../exec/process-tree.js";
import { type SpawnOptions, spawnCommand } from "../exec/spawn-command.js";
import type { ExecLimits } from "../limits.js";
import { processIdOf } from "./process-id.js";
import { LineRing } from "./ring-buffer.js";

export type ProcessStatus = "running" | "exited" | "killed";

/** What `list` / `poll` report about a background process. */
export interface ProcessInfo {
  processId: string;
  agent: string;
  command: string;
  pid: number | undefined;
  status: ProcessStatus;
  exitCode: number | null;
  signal: string | null;
  startedAt: number;
  lastUsedAt: number;
}

interface Entry {
  info: ProcessInfo;
  child: ChildProcess;
  log: LineRing;
  exited: Promise<void>;
}

export class ProcessNotFoundError extends Error {
  override readonly name = "ProcessNotFoundError";
  constructor(readonly processId: string) {
    super(`no background process '${processId}' on this executor`);
  }
}

export class ProcessLimitError extends Error {
  override readonly name = "ProcessLimitError";
  constructor(
    readonly limit: number,
    readonly perAgent = false,
  ) {
    super(
      perAgent
        ? `at most ${limit} background processes of one agent may run on one executor`
        : `at most ${limit} background processes may run on one executor`,
    );
  }
}

export interface ProcessRegistryOptions {
  executorId: string;
  limits: ExecLimits;
  /** Injected clock (epoch ms) for idle bookkeeping. */
  now?: () => number;
}

/**
 * Background processes owned by one executor. They outlive the tool call and
 * the cycle; each is visible only to the agent that started it; any process
 * not touched (start/poll/log/write) for `limits.processIdleTtlMs` is killed
 * and forgotten by `reap()` (run it periodically with `startReaper`).
 */
export class ProcessRegistry {
  readonly executorId: string;
  private readonly limits: ExecLimits;
  private readonly now: () => number;
  private readonly entries = new Map<string, Entry>();
  private sequence = 0;
  private reaper: NodeJS.Timeout | undefined;

  constructor(options: ProcessRegistryOptions) {
    this.executorId = options.executorId;
    this.limits = options.limits;
    this.now = options.now ?? Date.now;
  }

  start(agent: string, command: string, workspace: string, options: SpawnOptions): ProcessInfo {
    const running = [...this.entries.values()].filter((entry) => entry.info.status === "running");
    const mine = running.filter((entry) => entry.info.agent === agent).length;
    if (mine >= this.limits.maxBackgroundProcessesPerAgent) {
      throw new ProcessLimitError(this.limits.maxBackgroundProcessesPerAgent, true);
    }
    if (running.length >= this.limits.maxBackgroundProcesses) {
      throw new ProcessLimitError(this.limits.maxBackgroundProcesses);
    }
    this.sequence += 1;
    const processId = processIdOf(this.executorId, this.sequence);
    const child = spawnCommand(command, workspace, this.limits, options);
    const log = new LineRing(this.limits.processLogLines);
    const at = this.now();
    const info: ProcessInfo = {
      processId,
      agent,
      command,
      pid: child.pid,
      status: "running",
      exitCode: null,
      signal: null,
      startedAt: at,
      lastUsedAt: at,
    };
    child.stdout?.setEncoding("utf8").on("data", (chunk: string) => log.push(chunk));
    child.stderr?.setEncoding("utf8").on("data", (chunk: string) => log.push(chunk));
    child.stdin?.on("error", () => {});
    const exited = new Promise<void>((resolve) => {
      child.on("error", (error) => {
        log.push(`[spawn failed: ${error.message}]\n`);
        if (info.status === "running") info.status = "exited";
        resolve();
      });
      child.on("exit", (code, signal) => {
        info.exitCode = code;
        info.signal = signal;
        if (info.status === "running") info.status = "exited";
        resolve();
      });
    });
    this.entries.set(processId, { info, child, log, exited });
    return { ...info };
  }

  /** The agent's processes on this executor. */
  list(agent: string): ProcessInfo[] {
    return [...this.entries.values()].filter((entry) => entry.info.agent === agent).map((entry) => ({ ...entry.info }));
  }

  poll(agent: string, processId: string): ProcessInfo {
    const entry = this.touch(agent, processId);
    return { ...entry.info };
  }

  log(agent: string, processId: string, lines: number): { info: ProcessInfo; lines: string[]; droppedLines: number } {
    const entry = this.touch(agent, processId);
    return { info: { ...entry.info }, lines: entry.log.tail(lines), droppedLines: entry.log.droppedLines };
  }

  /** Writes to the process's stdin; `close` ends stdin after writing. */
  async write(agent: string, processId: string, data: string, close = false): Promise<ProcessInfo> {
    const entry = this.touch(agent, processId);
    const stdin = entry.child.stdin;
    if (entry.info.status !== "running" || stdin === null || stdin.destroyed || !stdin.writable) {
      throw new Error(`process '${processId}' is ${entry.info.status} and its stdin is closed`);
    }
    await new Promise<void>((resolve, reject) => stdin.write(data, (error) => (error ? reject(error) : resolve())));
    if (close) stdin.end();
    return { ...entry.info };
  }

  /** Kills the whole tree (SIGTERM, SIGKILL after the grace period) and waits for the exit. */
  async kill(agent: string, processId: string): Promise<ProcessInfo> {
    const entry = this.touch(agent, processId);
    await this.terminate(entry);
    return { ...entry.info };
  }

  /** Removes a finished process from the registry. */
  forget(agent: string, processId: string): void {
    const entry = this.touch(agent, processId);
    if (entry.info.status === "running") throw new Error(`process '${processId}' is still running; kill it first`);
    this.entries.delete(processId);
  }

  /** Kills and forgets every process idle longer than the TTL; returns their ids. */
  async reap(): Promise<string[]> {
    const cutoff = this.now() - this.limits.processIdleTtlMs;
    const idle = [...this.entries.values()].filter((entry) => entry.info.lastUsedAt <= cutoff);
    await Promise.all(idle.map((entry) => this.terminate(entry)));
    for (const entry of idle) this.entries.delete(entry.info.processId);
    return idle.map((entry) => entry.info.processId);
  }

  startReaper(intervalMs = Math.max(1_000, Math.min(60_000, this.limits.processIdleTtlMs / 4))): void {
    this.stopReaper();
    this.reaper = setInterval(() => void this.reap(), intervalMs);
    this.reaper.unref();
  }

  stopReaper(): void {
    if (this.reaper !== undefined) clearInterval(this.reaper);
    this.reaper = undefined;
  }

  /** Kills every process (executor shutdown). */
  async close(): Promise<void> {
    this.stopReaper();
    await Promise.all([...this.entries.values()].map((entry) => this.terminate(entry)));
    this.entries.clear();
  }

  get size(): number {
    return this.entries.size;
  }

  private touch(agent: string, processId: string): Entry {
    const entry = this.entries.get(processId);
    if (entry === undefined || entry.info.agent !== agent) throw new ProcessNotFoundError(processId);
    entry.info.lastUsedAt = this.now();
    return entry;
  }

  private async terminate(entry: Entry): Promise<void> {
    const pid = entry.child.pid;
    if (pid === undefined) return;
    if (entry.info.status === "running") entry.info.status = "killed";
    if (entry.info.status === "killed" || groupAlive(pid)) await killTree(pid, this.limits.killGraceMs);
    await entry.exited;
  }
}
