import { spawn } from "node:child_process";

export interface ExitStatus {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** A started child process, as the supervisor sees it (fakes implement this in tests). */
export interface ChildHandle {
  readonly pid: number | undefined;
  /** Resolves when the process has exited. */
  readonly exited: Promise<ExitStatus>;
  /** Whether it is still running. */
  running(): boolean;
  kill(signal: NodeJS.Signals): void;
}

export interface SpawnRequest {
  command: string;
  args: string[];
  env: Record<string, string>;
  cwd: string;
  /** Receives each chunk the child writes to stdout or stderr. */
  onOutput(chunk: string): void;
}

export type Spawner = (request: SpawnRequest) => ChildHandle;

/**
 * The real spawner: a child with piped output in a process group of its own,
 * so a Ctrl-C in the terminal reaches only `moniro`, which then stops the
 * services before the servers they use.
 */
export const spawnChild: Spawner = (request) => {
  const child = spawn(request.command, request.args, {
    cwd: request.cwd,
    env: request.env,
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  child.stdout?.setEncoding("utf8").on("data", request.onOutput);
  child.stderr?.setEncoding("utf8").on("data", request.onOutput);
  let status: ExitStatus | undefined;
  const exited = new Promise<ExitStatus>((resolve) => {
    child.once("exit", (code, signal) => {
      status = { code, signal };
      resolve(status);
    });
    // A binary that cannot be started never emits 'exit'.
    child.once("error", (error) => {
      request.onOutput(`failed to start ${request.command}: ${error.message}\n`);
      status = { code: 127, signal: null };
      resolve(status);
    });
  });
  return {
    pid: child.pid,
    exited,
    running: () => status === undefined,
    kill: (signal) => {
      if (status === undefined) child.kill(signal);
    },
  };
};
