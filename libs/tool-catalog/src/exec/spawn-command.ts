import { type ChildProcess, spawn } from "node:child_process";
import type { Duplex } from "node:stream";
import type { ExecLimits } from "../limits.js";
import { commandLine, GATE_FD } from "./command-line.js";
import { scrubbedEnvironment } from "./environment.js";
import { commandUser, type ExecSandbox } from "./sandbox.js";

export interface SpawnOptions {
  sandbox: ExecSandbox;
  /** The agent's tool policy allows the network (`tools.network: true`). */
  network: boolean;
  /**
   * `none`: the command's stdin is /dev/null (it reads end of file at once), one pipe fewer to set up
   * per call; `pipe` (default): `child.stdin` is there to write to.
   */
  stdin?: "pipe" | "none";
}

/**
 * Spawns `bash -c command` in the workspace, detached (own process group so
 * the whole tree can be killed), with a scrubbed environment, resource
 * limits, as the command user, inside bubblewrap (or, only on the explicit
 * unsafe opt-out, without it). Throws on an unavailable sandbox: callers
 * refuse the call before.
 */
export function spawnCommand(
  command: string,
  workspace: string,
  limits: ExecLimits,
  options: SpawnOptions,
): ChildProcess {
  const { sandbox } = options;
  if (sandbox.kind === "unavailable") throw new Error(`the sandbox is unavailable: ${sandbox.reason}`);
  // The /etc copy this sandbox binds is kept until the sandbox is gone (etc-copy.ts).
  const etc = sandbox.kind === "bubblewrap" ? sandbox.etcCopy?.acquire() : undefined;
  const argv = commandLine({
    command,
    workspace,
    limits,
    prlimitPath: sandbox.kind === "unsafe-none" ? sandbox.prlimitPath : undefined,
    bubblewrap:
      sandbox.kind === "bubblewrap"
        ? { bwrapPath: sandbox.bwrapPath, layout: sandbox.layout, network: options.network, etcDir: etc?.dir }
        : undefined,
  });
  const [program, ...args] = argv as [string, ...string[]];
  const user = commandUser(limits);
  // Switching to the user one already is needs no privilege, but setgroups would: leave it out.
  const switchUser = user !== undefined && (user.uid !== process.getuid?.() || user.gid !== process.getgid?.());
  const gated = sandbox.kind === "bubblewrap";
  const stdin = options.stdin === "none" ? "ignore" : "pipe";
  let child: ChildProcess;
  try {
    child = spawn(program, args, {
      cwd: workspace,
      env: scrubbedEnvironment(process.env, workspace),
      detached: true,
      // GATE_FD: the start gate of a sandboxed command (command-line.ts).
      stdio: gated ? [stdin, "pipe", "pipe", "pipe"] : [stdin, "pipe", "pipe"],
      ...(switchUser ? { uid: user.uid, gid: user.gid } : {}),
    });
  } catch (error) {
    etc?.release();
    throw error;
  }
  if (etc) {
    child.once("exit", etc.release);
    child.once("error", etc.release);
  }
  if (gated) openGate(child);
  return child;
}

/** Sends the go once the sandboxed command says it is ready; then the gate is done. */
function openGate(child: ChildProcess): void {
  const gate = child.stdio[GATE_FD] as Duplex | null | undefined;
  if (!gate) return;
  gate.on("error", () => {});
  gate.once("data", () => gate.end("g"));
  child.once("exit", () => gate.destroy());
}
