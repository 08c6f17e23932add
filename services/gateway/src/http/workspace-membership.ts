import type { WorkflowDefinition } from "@moniro/config";
import { notAParticipant, type SendRefusal, workflowNotRunning } from "@moniro/envelopes";
import { membershipOf, splitContext, type WorkspaceStore } from "@moniro/store";
import { HttpError } from "./http-error.js";

/** The workflow definitions, so that a refusal names what is really wrong and the real file (WorkflowInstances). */
export interface WorkflowLookup {
  /** The definition; throws 404 `unknown_workflow` (naming the known ones) or 400 `invalid_workflow`. */
  workflow(name: string): Promise<WorkflowDefinition>;
  /** The file that defines the workflow, or would (`<MONIRO_WORKFLOWS_DIR>/<name>.yaml`). */
  fileOf(name: string): Promise<string>;
}

/** The seed's refusal as a 409: the message is its first line, `details.hint` its second. */
export function refusalError(refusal: SendRefusal): HttpError {
  return new HttpError(409, refusal.code, refusal.message, {}, { hint: refusal.hint });
}

/** Redis did not answer: nothing was accepted. */
export function workspacesUnavailable(error: unknown): HttpError {
  return new HttpError(
    503,
    "redis_unavailable",
    `the workflow instance could not be read (${(error as Error)?.message ?? error}); nothing was accepted, retry later`,
    { "Retry-After": "2" },
  );
}

/**
 * `<workflow>:<tag>` is not running: 404 `unknown_workflow` (or 400
 * `invalid_workflow`) when no definition of it loads — starting it would fail
 * too — else the seed's 409 whose hint gives `--var` for each required
 * variable. Without definitions, or when they cannot be read, the seed's plain refusal.
 */
export async function notRunningError(
  workflows: WorkflowLookup | undefined,
  workflow: string,
  tag: string,
): Promise<HttpError> {
  const definition = await workflows?.workflow(workflow).catch((error: unknown) => {
    if (error instanceof HttpError) throw error;
    return undefined;
  });
  const required = Object.entries(definition?.variables ?? {})
    .filter(([, fallback]) => fallback === null)
    .map(([name]) => name);
  return refusalError(workflowNotRunning(workflow, tag, required));
}

/**
 * An input for `agent` in `context` is accepted only when the context is
 * personal, or the instance runs with the agent as a member; otherwise the
 * seed's refusal (409), or 404 `unknown_workflow` for a workflow not defined
 * (given `workflows`). Without a workspace store every workspace context is refused as not running.
 */
export async function requireMember(
  workspaces: WorkspaceStore | undefined,
  agent: string,
  context: string,
  workflows?: WorkflowLookup,
): Promise<void> {
  const workspace = splitContext(context);
  if (!workspace) return;
  if (!workspaces) throw await notRunningError(workflows, workspace.workflow, workspace.tag);
  const membership = await membershipOf(workspaces, agent, workspace).catch((error: unknown) => {
    throw workspacesUnavailable(error);
  });
  if (membership.ok) return;
  if (membership.refused === "workflow_not_running") {
    throw await notRunningError(workflows, workspace.workflow, workspace.tag);
  }
  const file = await workflows?.fileOf(workspace.workflow).catch(() => undefined);
  throw refusalError(notAParticipant(agent, workspace.workflow, file));
}
