import type { ExecLimits } from "../limits.js";
import type { EtcCopy } from "./etc-copy.js";
import { type SystemLayout, systemLayout } from "./system-layout.js";
import { which } from "./which.js";

/**
 * How this executor runs commands, decided once at start (probeSandbox):
 * - `bubblewrap`: every exec / process command runs in the sandbox (its /etc
 *   one bind of `etcCopy` when the executor made one, else one bind per
 *   whitelisted entry);
 * - `unavailable`: the sandbox cannot start here, so exec / process are
 *   refused with `reason` (what failed and how to fix it);
 * - `unsafe-none`: the operator opted out: commands run without isolation
 *   and every result carries `warning`.
 */
export type ExecSandbox =
  | { kind: "bubblewrap"; bwrapPath: string; layout: SystemLayout; etcCopy?: EtcCopy }
  | { kind: "unavailable"; reason: string }
  | { kind: "unsafe-none"; prlimitPath: string | undefined; warning: string };

/** What an opted-out executor says (the executor names its own setting in front of it). */
export const UNSAFE_CONSEQUENCES =
  "commands can read what the executor's user can read, reach the network (NATS, Redis) and outlive the executor";

/** The uid:gid of nobody on Debian and most distributions. */
export const NOBODY = { uid: 65534, gid: 65534 } as const;

/**
 * The host user commands run as: `limits.runAs`, else nobody when the
 * executor is root (so bwrap is unprivileged and its user namespace maps to
 * an unprivileged uid), else the executor's own user (undefined: no switch).
 */
export function commandUser(
  limits: Pick<ExecLimits, "runAs">,
  executorUid: number | undefined = process.getuid?.(),
): { uid: number; gid: number } | undefined {
  if (limits.runAs !== undefined) return limits.runAs;
  return executorUid === 0 ? NOBODY : undefined;
}

/** Exec / process calls on a sandbox that is unavailable get this text. */
export function sandboxUnavailableText(reason: string): string {
  return `Commands are disabled on this tool executor: its sandbox cannot start (${reason}). Tell the operator; the other tools still work.`;
}

/**
 * The sandbox this machine seems to offer, without running it (tests, and
 * the first step of probeSandbox): bwrap on PATH. The limits are set by
 * the sandbox's own shell (`ulimit`), so prlimit is not needed.
 */
export function detectSandbox(): ExecSandbox {
  const bwrapPath = which("bwrap");
  if (bwrapPath === undefined) {
    return {
      kind: "unavailable",
      reason:
        "bubblewrap is not installed: install it (Debian/Ubuntu: apt-get install bubblewrap) so `bwrap` is on the executor's PATH",
    };
  }
  return { kind: "bubblewrap", bwrapPath, layout: systemLayout() };
}

/** What exec results report about the protection a command had. */
export function sandboxReport(sandbox: ExecSandbox, limits: ExecLimits, network: boolean): Record<string, unknown> {
  const user = commandUser(limits);
  const runAs = user === undefined ? "executor user" : `${user.uid}:${user.gid}`;
  if (sandbox.kind === "unsafe-none") return { kind: "none", warning: sandbox.warning, runAs };
  if (sandbox.kind === "unavailable") return { kind: "unavailable", reason: sandbox.reason };
  return { kind: "bubblewrap", network, runAs, maxProcesses: limits.maxProcesses ?? null };
}
