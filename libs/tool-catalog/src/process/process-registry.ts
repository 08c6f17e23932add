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
  /** The context it was started in (`personal` or `<workflow>:<tag>`): only calls in that context reach it. */
  context: string;
  command: string;
  pid: number | undefined;
  status: ProcessStatus;
  exitCode: number | null;
  signal: string | null;
  startedAt: number;
  lastUsedAt: number;
  /** Why the executor stopped it (its workspace instance stopped, its agent was deleted); absent otherwise. */
  stoppedBecause?: string;
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

/** The agent's own process, started in another context than the call's (a workspace vs its personal one). */
export class ProcessContextError extends Error {
  override readonly name = "ProcessContextError";
  constructor(
    readonly processId: string,
    readonly startedIn: string,
    readonly calledIn: string,
  ) {
    super(
      `background process '${processId}' was started in ${contextName(startedIn)}, and this call runs in ${contextName(calledIn)}: a process is reached only from the context it was started in`,
    );
  }
}

/** `your personal context` / `workspace review:main`. */
export function contextName(context: string): string {
  return context === "personal" ? "your personal context" : `workspace ${context}`;
}

/** What a process stopped with its workspace instance records, and a later call about it is told. */
export const instanceStoppedReason = (workflow: string, tag: string): string =>
  `its workspace ${workflow}:${tag} stopped`;

/** What a process stopped with its deleted agent records. */
export const agentDeletedReason = (agent: string): string => `its agent ${agent} was deleted`;

/** A start for an agent this executor heard deleted (and not defined again since): nothing is spawned. */
export class ProcessAgentDeletedError extends Error {
  override readonly name = "ProcessAgentDeletedError";
  constructor(readonly agent: string) {
    super(`agent '${agent}' was deleted while this call ran, so no background process was started for it`);
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
 * the cycle; each is visible only to the agent that started it, and reached
 * only from the context it was started in (when the caller names one); any process
 * not touched (start/poll/log/write) for `limits.processIdleTtlMs` is killed
 * and forgotten by `reap()` (run it periodically with `startReaper`).
 */
export class ProcessRegistry {
  readonly executorId: string;
  private readonly limits: ExecLimits;
  private readonly now: () => number;
  private readonly entries = new Map<string, Entry>();
  /** Agents heard deleted (agentDeleted) and not defined again since: a start for one spawns nothing. */
  private readonly deletedAgents = new Set<string>();
  private sequence = 0;
  private reaper: NodeJS.Timeout | undefined;

  constructor(options: ProcessRegistryOptions) {
    this.executorId = options.executorId;
    this.limits = options.limits;
    this.now = options.now ?? Date.now;
  }

  start(agent: string, command: string, workspace: string, options: SpawnOptions, context = "personal"): ProcessInfo {
    // A start that passed the agent's lookup before its deletion was heard, which found nothing to stop yet.
    if (this.deletedAgents.has(agent)) throw new ProcessAgentDeletedError(agent);
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
      context,
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

  /** The agent's processes on this executor (those started in `context` only, when given). */
  list(agent: string, context?: string): ProcessInfo[] {
    return [...this.entries.values()]
      .filter((entry) => entry.info.agent === agent && (context === undefined || entry.info.context === context))
      .map((entry) => ({ ...entry.info }));
  }

  poll(agent: string, processId: string, context?: string): ProcessInfo {
    const entry = this.touch(agent, processId, context);
    return { ...entry.info };
  }

  /** The agent's process as it is, without touching it (undefined when not the agent's, or not here). */
  peek(agent: string, processId: string): ProcessInfo | undefined {
    const entry = this.entries.get(processId);
    return entry === undefined || entry.info.agent !== agent ? undefined : { ...entry.info };
  }

  log(
    agent: string,
    processId: string,
    lines: number,
    context?: string,
  ): { info: ProcessInfo; lines: string[]; droppedLines: number } {
    const entry = this.touch(agent, processId, context);
    return { info: { ...entry.info }, lines: entry.log.tail(lines), droppedLines: entry.log.droppedLines };
  }

  /** Writes to the process's stdin; `close` ends stdin after writing. */
  async write(agent: string, processId: string, data: string, close = false, context?: string): Promise<ProcessInfo> {
    const entry = this.touch(agent, processId, context);
    const stdin = entry.child.stdin;
    if (entry.info.status !== "running" || stdin === null || stdin.destroyed || !stdin.writable) {
      throw new Error(`process '${processId}' is ${entry.info.status} and its stdin is closed`);
    }
    await new Promise<void>((resolve, reject) => stdin.write(data, (error) => (error ? reject(error) : resolve())));
    if (close) stdin.end();
    return { ...entry.info };
  }

  /** Kills the whole tree (SIGTERM, SIGKILL after the grace period) and waits for the exit. */
  async kill(agent: string, processId: string, context?: string): Promise<ProcessInfo> {
    const entry = this.touch(agent, processId, context);
    await this.terminate(entry);
    return { ...entry.info };
  }

  /** Stops one of the agent's processes as `kill` does, recording `reason` (as an instance's stop does). */
  async stop(agent: string, processId: string, reason: string): Promise<ProcessInfo> {
    const entry = this.touch(agent, processId);
    if (entry.info.status === "running") entry.info.stoppedBecause = reason;
    await this.terminate(entry);
    return { ...entry.info };
  }

  /** Removes a finished process from the registry. */
  forget(agent: string, processId: string): void {
    const entry = this.touch(agent, processId);
    if (entry.info.status === "running") throw new Error(`process '${processId}' is still running; kill it first`);
    this.entries.delete(processId);
  }

  /**
   * Stops (SIGTERM, SIGKILL after the kill grace, as `kill`) every running process started in
   * `context` (every agent's): its workspace instance stopped. They stay listed, `killed` with
   * `reason`, until reaped. Returns their ids.
   */
  stopContext(context: string, reason: string): Promise<string[]> {
    return this.stopWhere((info) => info.context === context, reason);
  }

  /**
   * The agent was deleted: stops every running process of it (every context), and refuses every later
   * start for it (a call that passed its lookup before the deletion) until `agentDefined`. Returns their ids.
   */
  agentDeleted(agent: string): Promise<string[]> {
    this.deletedAgents.add(agent);
    return this.stopWhere((info) => info.agent === agent, agentDeletedReason(agent));
  }

  /** The agent is defined (again): its starts spawn again. */
  agentDefined(agent: string): void {
    this.deletedAgents.delete(agent);
  }

  private async stopWhere(matches: (info: ProcessInfo) => boolean, reason: string): Promise<string[]> {
    const stopping = [...this.entries.values()].filter(
      (entry) => entry.info.status === "running" && matches(entry.info),
    );
    for (const entry of stopping) entry.info.stoppedBecause = reason;
    await Promise.all(stopping.map((entry) => this.terminate(entry)));
    return stopping.map((entry) => entry.info.processId);
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

  private touch(agent: string, processId: string, context?: string): Entry {
    const entry = this.entries.get(processId);
    if (entry === undefined || entry.info.agent !== agent) throw new ProcessNotFoundError(processId);
    if (context !== undefined && entry.info.context !== context) {
      throw new ProcessContextError(processId, entry.info.context, context);
    }
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
