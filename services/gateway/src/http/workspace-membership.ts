import { notAParticipant, type SendRefusal, workflowNotRunning } from "@moniro/envelopes";
import { membershipOf, splitContext, type WorkspaceStore } from "@moniro/store";
import { HttpError } from "./http-error.js";

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
 * An input for `agent` in `context` is accepted only when the context is
 * personal, or the instance runs with the agent as a member; otherwise the
 * seed's refusal (409). Without a workspace store every workspace context is refused as not running.
 */
export async function requireMember(
  workspaces: WorkspaceStore | undefined,
  agent: string,
  context: string,
): Promise<void> {
  const workspace = splitContext(context);
  if (!workspace) return;
  if (!workspaces) throw refusalError(workflowNotRunning(workspace.workflow, workspace.tag));
  const membership = await membershipOf(workspaces, agent, workspace).catch((error: unknown) => {
    throw workspacesUnavailable(error);
  });
  if (membership.ok) return;
  throw refusalError(
    membership.refused === "workflow_not_running"
      ? workflowNotRunning(workspace.workflow, workspace.tag)
      : notAParticipant(agent, workspace.workflow),
  );
}
