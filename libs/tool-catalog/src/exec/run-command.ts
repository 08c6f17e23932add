import type { ExecLimits } from "../limits.js";
import { CappedOutput } from "./output-cap.js";
import { groupAlive, killTree } from "./process-tree.js";
import { type SpawnOptions, spawnCommand } from "./spawn-command.js";

export interface CommandResult {
  exitCode: number | null;
  signal: string | null;
  output: string;
  truncated: boolean;
  timedOut: boolean;
  canceled: boolean;
  /** Set when the command could not be started. */
  spawnError?: string;
  pid: number | undefined;
}

/**
 * Runs a foreground command to completion, timeout or cancel. On timeout or
 * cancel the whole tree gets SIGTERM then SIGKILL; when the shell exits
 * normally, processes it left running are killed too (in the sandbox the
 * end of its PID namespace takes them all, `setsid` or not; use the
 * `process` tool for background work).
 */
export function runCommand(
  command: string,
  workspace: string,
  limits: ExecLimits,
  options: SpawnOptions & { timeoutMs: number; signal: AbortSignal; stdin?: string },
): Promise<CommandResult> {
  return new Promise((resolve) => {
    const output = new CappedOutput(limits.outputCapBytes);
    const child = spawnCommand(command, workspace, limits, {
      ...options,
      stdin: options.stdin === undefined ? "none" : "pipe",
    });
    const pid = child.pid;
    let timedOut = false;
    let canceled = false;
    let exit: { code: number | null; signal: string | null } | undefined;
    let killing: Promise<void> | undefined;
    let settled = false;

    const kill = (): Promise<void> => {
      killing ??= pid === undefined ? Promise.resolve() : killTree(pid, limits.killGraceMs);
      return killing;
    };
    const finish = (spawnError?: string) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      options.signal.removeEventListener("abort", onAbort);
      const result: CommandResult = {
        exitCode: exit?.code ?? null,
        signal: exit?.signal ?? null,
        output: output.text(),
        truncated: output.truncated,
        timedOut,
        canceled,
        pid,
      };
      if (spawnError !== undefined) result.spawnError = spawnError;
      resolve(result);
    };
    const onAbort = () => {
      canceled = true;
      void kill();
    };
    const timer = setTimeout(() => {
      timedOut = true;
      void kill();
    }, options.timeoutMs);

    child.stdout?.setEncoding("utf8").on("data", (chunk: string) => output.push(chunk));
    child.stderr?.setEncoding("utf8").on("data", (chunk: string) => output.push(chunk));
    child.stdin?.on("error", () => {});
    child.stdin?.end(options.stdin ?? "");
    child.on("error", (error) => finish(error.message));
    child.on("exit", (code, signal) => {
      exit = { code, signal };
      // Leftovers in the group (background jobs) would keep the pipes open: end them. In the sandbox
      // there are none: bwrap exits after its PID namespace's init, whose exit takes every process inside.
      const contained = options.sandbox.kind === "bubblewrap";
      if (!contained && pid !== undefined && groupAlive(pid)) void kill().then(() => setTimeout(() => finish(), 50));
    });
    child.on("close", () => {
      if (killing !== undefined) void killing.then(() => finish());
      else finish();
    });
    if (options.signal.aborted) onAbort();
    else options.signal.addEventListener("abort", onAbort, { once: true });
  });
}
