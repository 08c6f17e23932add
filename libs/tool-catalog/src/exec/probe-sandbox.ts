import { mkdir } from "node:fs/promises";
import { dirname } from "node:path";
import type { ExecLimits } from "../limits.js";
import { EtcCopy } from "./etc-copy.js";
import { runCommand } from "./run-command.js";
import { commandUser, detectSandbox, type ExecSandbox } from "./sandbox.js";
import { handToCommandUser } from "./workspace-owner.js";

const PROBE_TIMEOUT_MS = 10_000;

/**
 * Runs `true` once in the real sandbox, as the real command user, in
 * `probeWorkspace` (a directory beside the agents' workspaces, so the same
 * directory permissions apply). Returns the sandbox to use, or why there is
 * none and how to fix it. The caller checks first that it may switch to the
 * command user at all.
 *
 * With `etcCopyIn` (the executor's temporary directory), the sandbox's /etc is
 * one bind of a copy of the whitelisted entries made there (etc-copy.ts), when
 * the copy can be made and the probe passes with it; otherwise one bind per
 * entry, and `onEtcCopyFailed` hears why. Whoever gets a sandbox with a copy
 * closes it (`closeSandbox`) when the executor stops.
 */
export async function probeSandbox(
  limits: ExecLimits,
  probeWorkspace: string,
  options: { etcCopyIn?: string; onEtcCopyFailed?: (reason: string) => void } = {},
): Promise<ExecSandbox> {
  const detected = detectSandbox();
  if (detected.kind !== "bubblewrap") return detected;
  try {
    await mkdir(probeWorkspace, { recursive: true });
    await handToCommandUser(limits, probeWorkspace);
  } catch (error) {
    return {
      kind: "unavailable",
      reason: `the probe directory ${probeWorkspace} cannot be prepared: ${String(error)}`,
    };
  }
  if (options.etcCopyIn !== undefined) {
    let etcCopy: EtcCopy | undefined;
    try {
      etcCopy = await EtcCopy.create(detected.layout.etc, options.etcCopyIn);
    } catch (error) {
      options.onEtcCopyFailed?.(`the copy of /etc could not be made in ${options.etcCopyIn}: ${String(error)}`);
    }
    if (etcCopy !== undefined) {
      const copied = await probe({ ...detected, etcCopy }, limits, probeWorkspace);
      if (copied === "passed") return { ...detected, etcCopy };
      etcCopy.close();
      options.onEtcCopyFailed?.(`the sandbox did not start with the copy of /etc in ${options.etcCopyIn}: ${copied}`);
    }
  }
  const result = await probe(detected, limits, probeWorkspace);
  return result === "passed" ? detected : unavailable(result, limits, probeWorkspace);
}

/** Releases what a sandbox holds: its /etc copy (the executor is stopping). */
export function closeSandbox(sandbox: ExecSandbox): void {
  if (sandbox.kind === "bubblewrap") sandbox.etcCopy?.close();
}

/** Runs `true` in the sandbox, in the prepared probe directory: "passed", or what went wrong. */
async function probe(sandbox: ExecSandbox, limits: ExecLimits, probeWorkspace: string): Promise<"passed" | string> {
  const result = await runCommand("true", probeWorkspace, limits, {
    timeoutMs: PROBE_TIMEOUT_MS,
    signal: new AbortController().signal,
    sandbox,
    network: false,
  });
  if (result.exitCode === 0) return "passed";
  return (result.spawnError ?? result.output).trim() || `exit code ${result.exitCode}, signal ${result.signal}`;
}

/** Why there is no sandbox, and how to fix it. */
function unavailable(output: string, limits: ExecLimits, probeWorkspace: string): ExecSandbox {
  const user = commandUser(limits);
  const who = user === undefined ? "the executor's user" : `uid ${user.uid}`;
  if (/source path.*Permission denied/i.test(output)) {
    return {
      kind: "unavailable",
      reason: `bubblewrap, running as ${who}, cannot reach the workspaces directory (${output}): make ${dirname(probeWorkspace)} and every directory above it traversable by that user (chmod o+x), or move the workspaces`,
    };
  }
  return {
    kind: "unavailable",
    reason: `bubblewrap failed to start a sandbox as ${who} (${output}): it needs unprivileged user namespaces; on the host allow them (sysctl kernel.unprivileged_userns_clone=1, user.max_user_namespaces > 0, on Ubuntu kernel.apparmor_restrict_unprivileged_userns=0), in a container run with a seccomp/AppArmor profile that allows them (Docker: --security-opt seccomp=unconfined --security-opt apparmor=unconfined; Kubernetes: seccompProfile Unconfined)`,
  };
}
