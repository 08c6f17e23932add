import { type ChildProcess, spawn } from "node:child_process";
import type { ExecLimits } from "../limits.js";
import { commandLine } from "./command-line.js";
import { scrubbedEnvironment } from "./environment.js";
import { which } from "./which.js";

/** Which sandbox helpers a command gets with these limits on this machine. */
export function sandboxHelpers(limits: ExecLimits): { prlimitPath: string | undefined; bwrapPath: string | undefined } {
  return { prlimitPath: which("prlimit"), bwrapPath: limits.bwrap.enabled ? which("bwrap") : undefined };
}

/** What protects a command: reported in exec results so nobody assumes a sandbox that is not there. */
export function sandboxReport(limits: ExecLimits): { bwrap: boolean; prlimit: boolean; runAs: boolean } {
  const helpers = sandboxHelpers(limits);
  return {
    bwrap: helpers.bwrapPath !== undefined,
    prlimit: helpers.prlimitPath !== undefined,
    runAs: limits.runAs !== undefined,
  };
}

/**
 * Spawns `bash -c command` in the workspace, detached (own process group so the
 * whole tree can be killed), with a scrubbed environment, resource limits,
 * optional run-as user and optional bubblewrap.
 */
export function spawnCommand(command: string, workspace: string, limits: ExecLimits): ChildProcess {
  const argv = commandLine({ command, workspace, limits, ...sandboxHelpers(limits) });
  const [program, ...args] = argv as [string, ...string[]];
  return spawn(program, args, {
    cwd: workspace,
    env: scrubbedEnvironment(process.env, workspace),
    detached: true,
    stdio: ["pipe", "pipe", "pipe"],
    ...(limits.runAs === undefined ? {} : { uid: limits.runAs.uid, gid: limits.runAs.gid }),
  });
}
