import { notAParticipant, parentOfChild, refusalText, workflowNotRunning } from "@moniro/envelopes";
import { splitContext } from "@moniro/store";
import { fail, type TeamPlace, type TeamSeat, type ToolContext, type ToolOutcome } from "../tool.js";

export type SeatResult = { ok: true; seat: TeamSeat } | { ok: false; outcome: ToolOutcome };
export type PlaceResult = { ok: true; place: TeamPlace } | { ok: false; outcome: ToolOutcome };

/**
 * Where a call in a workspace context works, before any read: the instance
 * and the agent that must be one of its members (a sub-agent: its parent).
 * Refused outside a workspace context and on an executor without a store.
 */
export function placeOf(ctx: ToolContext, tool: string): PlaceResult {
  const names = splitContext(ctx.context);
  if (names === undefined) {
    return {
      ok: false,
      outcome: fail(
        "not-in-workspace",
        `'${tool}' works only in a workspace: this call runs in your personal context. Team tools are for work you do as a member of a running workflow instance (an input from 'ws:<workflow>:<tag>').`,
      ),
    };
  }
  if (ctx.team === undefined) {
    return {
      ok: false,
      outcome: fail(
        "workspace-unavailable",
        `'${tool}' cannot reach workspace ${ctx.context}: this tool executor has no workspace store.`,
        { retryable: true },
      ),
    };
  }
  const { workflow, tag } = names;
  const agent = parentOfChild(ctx.agent) ?? ctx.agent;
  return { ok: true, place: { workflow, tag, instance: ctx.team.store.instance(workflow, tag), agent } };
}

/**
 * The member a call in a workspace context acts as: the instance must be
 * running and the calling agent (a sub-agent: its parent) one of its members.
 * Read from the Redis workspace state on every call, so a stopped instance
 * or a removed member is refused at once. The refusals are the seed's texts
 * (a tool that `checksSeat` gets the same ones from its store call).
 */
export async function takeSeat(ctx: ToolContext, tool: string): Promise<SeatResult> {
  const placed = placeOf(ctx, tool);
  if (!placed.ok) return placed;
  const { workflow, tag, instance, agent } = placed.place;
  const state = await instance.state();
  if (state === null || state.status !== "running") {
    return { ok: false, outcome: fail("workflow_not_running", refusalText(workflowNotRunning(workflow, tag))) };
  }
  const member = state.members.find((candidate) => candidate.agent === agent);
  if (member === undefined) {
    return { ok: false, outcome: fail("not_a_member", refusalText(notAParticipant(agent, workflow))) };
  }
  return { ok: true, seat: { workflow, tag, instance, member } };
}
