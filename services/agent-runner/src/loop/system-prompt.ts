import type { WorkspaceRefusal } from "@moniro/ports";
import { personalSections } from "./personal-sections.js";
import { buildSystemPrompt } from "./prompt.js";
import type { AgentRun } from "./run-context.js";
import { defer } from "./run-context.js";
import { type CycleWorkspace, workspaceSection } from "./workspace-sections.js";

/**
 * Reads the workspace context of a cycle that works in `context` (once per
 * cycle), then moves the member's "last seen" cursor past the posts read,
 * without waiting: the prompt shows them, so the next cycle starts after them.
 * Undefined without the port.
 */
export async function readCycleWorkspace(run: AgentRun, context: string): Promise<CycleWorkspace | undefined> {
  const port = run.deps.workspace;
  if (!port) return undefined;
  const { channel, mentions, documents } = run.settings.workspace;
  const read = await port.promptSnapshot(run.agent, context, { channel, mentions, documents });
  if ("refused" in read) return { context, refused: read.refused };
  const newest = read.unseen.at(-1);
  if (newest) defer(run, port.markSeen(context, read.member.name, newest.id));
  return { context, snapshot: read };
}

const REFUSED: Record<WorkspaceRefusal, string> = {
  workflow_not_running: "is not running",
  not_a_participant: "does not have you as a member",
};

function workspacePart(workspace: CycleWorkspace | undefined, maxTokens: number): string {
  if (!workspace) return "";
  if ("refused" in workspace) {
    return `## Workspace ${workspace.context}\nThis input names workspace ${workspace.context}, which ${REFUSED[workspace.refused]}: it is handled with your personal context only, and the team tools are not available.`;
  }
  return workspaceSection(workspace.snapshot, maxTokens);
}

/**
 * The cycle's system prompt: the agent's fixed parts and its personal
 * context, read with one snapshot (one round trip), and in a workspace cycle
 * the workspace read at the cycle's start. Called at the cycle's start and
 * after a compaction (the prompt cache is cold then anyway), so every LLM
 * call of a cycle sends the same system prompt and pays nothing for assembly.
 */
export async function assembleSystemPrompt(
  run: AgentRun,
  workspace?: Promise<CycleWorkspace | undefined>,
): Promise<string> {
  const { settings } = run;
  const { maxTokens, recentNotes } = settings.personal;
  // The run's first prompt uses the snapshot read with the run's start (same round trip as the lease).
  const ahead = run.personalAhead;
  run.personalAhead = undefined;
  const [snapshot, current] = await Promise.all([
    ahead?.notes === recentNotes
      ? ahead.snapshot
      : run.deps.personal?.promptSnapshot(run.agent, { notes: recentNotes }),
    workspace,
  ]);
  const personal = snapshot ? personalSections(snapshot, maxTokens, recentNotes) : {};
  const memberAppend = current && "snapshot" in current ? current.snapshot.member.promptAppend : undefined;
  return buildSystemPrompt({
    base: settings.systemPrompt,
    soul: settings.soul,
    workflowAppend: [settings.workflowAppend, memberAppend ?? ""].filter((part) => part.trim()).join("\n\n"),
    workspace: workspacePart(current, settings.workspace.maxTokens),
    ...personal,
  });
}
