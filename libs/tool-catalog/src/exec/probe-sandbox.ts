import { mkdir } from "node:fs/promises";
import { dirname } from "node:path";
import type { ExecLimits } from "../limits.js";
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
 */
export async function probeSandbox(limits: ExecLimits, probeWorkspace: string): Promise<ExecSandbox> {
  const detected = detectSandbox();
  if (detected.kind !== "bubblewrap") return detected;
  const user = commandUser(limits);
  try {
    await mkdir(probeWorkspace, { recursive: true });
    await handToCommandUser(limits, probeWorkspace);
  } catch (error) {
    return {
      kind: "unavailable",
      reason: `the probe directory ${probeWorkspace} cannot be prepared: ${String(error)}`,
    };
  }
  const result = await runCommand("true", probeWorkspace, limits, {
    timeoutMs: PROBE_TIMEOUT_MS,
    signal: new AbortController().signal,
    sandbox: detected,
    network: false,
  });
  if (result.exitCode === 0) return detected;
  const who = user === undefined ? "the executor's user" : `uid ${user.uid}`;
  const output = (result.spawnError ?? result.output).trim() || `exit code ${result.exitCode}, signal ${result.signal}`;
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
