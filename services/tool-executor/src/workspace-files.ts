import { mkdir } from "node:fs/promises";
import { join, resolve } from "node:path";
import { subscribeEnvelopes } from "@moniro/bus";
import { type Subjects, type WorkspaceFilesReply, workspaceFilesRequestSchema } from "@moniro/envelopes";
import type { LogSink } from "@moniro/telemetry";
import { type ExecLimits, type ExecSandbox, handToCommandUser, removeTree, runCommand } from "@moniro/tool-catalog";
import type { NatsConnection, Subscription } from "@nats-io/transport-node";

/** The queue group of the workspace-files responders: one executor answers each request. */
export const WORKSPACE_FILES_QUEUE = "tool-executor";

/** `<root>/<workflow>__<tag>` (both validated subject tokens: no '/' or '..'). */
export const sharedDirectory = (root: string, workflow: string, tag: string): string =>
  join(resolve(root), `${workflow}__${tag}`);

/** Creates the shared directory and runs the setup steps in it, sandboxed like `exec`; a directory it created is removed on failure. */
export async function runSetup(
  deps: { workspacesDir: string; limits: ExecLimits; sandbox: ExecSandbox },
  request: { workflow: string; tag: string; steps: ReadonlyArray<{ shell: string; as?: string | undefined }> },
): Promise<WorkspaceFilesReply> {
  const dir = sharedDirectory(deps.workspacesDir, request.workflow, request.tag);
  if (request.steps.length > 0 && deps.sandbox.kind === "unavailable") {
    return {
      ok: false,
      message: `setup steps need the exec sandbox, which is unavailable here: ${deps.sandbox.reason}`,
    };
  }
  // A kept (persistent) instance's directory is used again, and never removed by a failing step.
  const created = (await mkdir(dir, { recursive: true })) !== undefined;
  await handToCommandUser(deps.limits, resolve(deps.workspacesDir), dir);
  const outputs: Record<string, string> = {};
  for (const [index, step] of request.steps.entries()) {
    const result = await runCommand(step.shell, dir, deps.limits, {
      timeoutMs: deps.limits.defaultTimeoutMs,
      signal: new AbortController().signal,
      sandbox: deps.sandbox,
      network: false,
    });
    const failed =
      result.spawnError !== undefined || result.timedOut || result.exitCode !== 0 || result.signal !== null;
    if (failed) {
      if (created) await removeTree(dir);
      const why =
        result.spawnError !== undefined
          ? `could not start bash: ${result.spawnError}`
          : result.timedOut
            ? `timed out after ${deps.limits.defaultTimeoutMs} ms`
            : result.exitCode !== null
              ? `exit code ${result.exitCode}`
              : `killed by ${result.signal}`;
      return {
        ok: false,
        step: index,
        message: `setup step ${index + 1} (${step.shell}) failed: ${why}`,
        output: result.output,
      };
    }
    if (step.as !== undefined) outputs[step.as] = result.output.replace(/\n$/, "");
  }
  return { ok: true, outputs };
}

/**
 * Answers `<ns>.ws.files` (docs/workflows.md "Instances"): the shared
 * directories of workflow instances on this executor's MONIRO_WORKSPACES_DIR.
 * An invalid request gets `{ ok: false, message }` naming each bad field and
 * a DLQ record on `<ns>.dlq.tool`, as an invalid tool call does.
 */
export function answerWorkspaceFiles(deps: {
  nc: NatsConnection;
  subjects: Subjects;
  workspacesDir: string;
  limits: ExecLimits;
  sandbox: ExecSandbox;
  logger: LogSink;
}): Subscription {
  const failed = (message: string): WorkspaceFilesReply => ({ ok: false, message });
  return subscribeEnvelopes({
    nc: deps.nc,
    subject: deps.subjects.wsFiles,
    queue: WORKSPACE_FILES_QUEUE,
    schema: workspaceFilesRequestSchema,
    origin: "tool",
    subjects: deps.subjects,
    what: "workspace files request",
    logger: deps.logger,
    invalidReply: (error) => failed(error.message),
    errorReply: (error) => failed((error as Error)?.message ?? String(error)),
    handler: async (request): Promise<WorkspaceFilesReply> => {
      if (request.op === "remove") {
        // Removed on descriptors: a member's background process may still run there (docs/security.md).
        await removeTree(sharedDirectory(deps.workspacesDir, request.workflow, request.tag));
        return { ok: true, outputs: {} };
      }
      return runSetup(deps, request);
    },
  });
}
