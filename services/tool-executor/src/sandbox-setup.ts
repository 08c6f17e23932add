import { join } from "node:path";
import type { LogSink } from "@moniro/telemetry";
import {
  commandUser,
  defaultEtcCopyParent,
  type ExecLimits,
  type ExecSandbox,
  probeSandbox,
  UNSAFE_CONSEQUENCES,
  which,
} from "@moniro/tool-catalog";

/**
 * Beside the agents' workspaces (so the same directory permissions apply);
 * agent names start with [a-z0-9], so no agent can own it.
 */
export const PROBE_DIRECTORY = ".sandbox-probe";

/** Logged at start and carried in every exec result of an executor without a sandbox. */
export const UNSAFE_WARNING = `exec runs WITHOUT a sandbox (MONIRO_EXEC_UNSAFE_NO_SANDBOX=true): ${UNSAFE_CONSEQUENCES}`;

export interface SandboxSetupOptions {
  limits: ExecLimits;
  workspacesRoot: string;
  /** MONIRO_EXEC_UNSAFE_NO_SANDBOX */
  unsafeNoSandbox: boolean;
  logger: LogSink;
  /** Where the sandbox's /etc copy is made (default: defaultEtcCopyParent(): $TMPDIR, else /dev/shm, else the OS temporary directory). */
  etcCopyIn?: string | undefined;
}

/**
 * Decides at start how exec / process commands run: bubblewrap when a probe
 * (`true`, with the real arguments and user) succeeds; otherwise commands
 * are refused with the cause and the fix, unless the operator opted out of
 * the sandbox, which is logged at warn level.
 */
export async function setUpSandbox(options: SandboxSetupOptions): Promise<ExecSandbox> {
  const { logger, limits } = options;
  const user = commandUser(limits);
  const runAs = user === undefined ? `executor user (uid ${process.getuid?.()})` : `${user.uid}:${user.gid}`;
  if (options.unsafeNoSandbox) {
    logger.warn({ sandbox: "none", runAs }, UNSAFE_WARNING);
    return { kind: "unsafe-none", prlimitPath: which("prlimit"), warning: UNSAFE_WARNING };
  }
  const executorUid = process.getuid?.();
  const sandbox: ExecSandbox =
    user !== undefined && executorUid !== 0 && user.uid !== executorUid
      ? {
          kind: "unavailable",
          reason: `commands are to run as uid ${user.uid} (MONIRO_EXEC_RUN_AS), but the executor runs as uid ${executorUid} and cannot switch users: unset MONIRO_EXEC_RUN_AS (commands then run as the executor's user) or run the executor as root`,
        }
      : await probeSandbox(limits, join(options.workspacesRoot, PROBE_DIRECTORY), {
          etcCopyIn: options.etcCopyIn ?? defaultEtcCopyParent(),
          onEtcCopyFailed: (reason) =>
            logger.warn({ reason }, "the sandbox's /etc is one bind per whitelisted entry (slower to start)"),
        });
  if (sandbox.kind === "bubblewrap") {
    const etc = sandbox.etcCopy ? "copy" : "binds";
    logger.info({ sandbox: "bubblewrap", runAs, maxProcesses: limits.maxProcesses, etc }, "exec sandbox ready");
  } else if (sandbox.kind === "unavailable") {
    logger.error(
      { sandbox: "unavailable", reason: sandbox.reason },
      "exec sandbox unavailable: exec and process calls are refused until it is fixed (or MONIRO_EXEC_UNSAFE_NO_SANDBOX=true is set, which runs them without isolation)",
    );
  }
  return sandbox;
}
