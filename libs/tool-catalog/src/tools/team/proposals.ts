import { stamp } from "@moniro/envelopes";
import {
  DEFAULT_OPTIONS,
  type ProposalState,
  postToChannel,
  type VoteResult,
  workspaceContext,
  workspaceSource,
} from "@moniro/store";
import { z } from "zod";
import { defineTool, ok, type TeamSeat, type ToolContext } from "../../tool.js";
import { seatOf } from "./seat-of.js";

const proposalIdSchema = z.string().regex(/^p\d+$/, "must be a proposal id such as 'p1' (from team_proposal_create)");

/** `decided 'yes'`, `tied`, or `open (2 of 3 voted)`. */
function statusText(state: ProposalState): string {
  const { status } = state;
  if (status.status === "decided") return `decided '${status.result}'`;
  if (status.status === "tied") return "tied";
  return `open (${state.cast} of ${state.proposal.voters.length} voted)`;
}

function tallyText(state: ProposalState): string {
  return Object.entries(state.tally)
    .map(([option, votes]) => `${option}: ${votes}`)
    .join(", ");
}

/**
 * Tells the proposer of a vote: an input from `ws:<workflow>:<tag>` in the
 * workspace context, lane `normal`, with `meta.batch` = `votes:<workflow>:<tag>`
 * so the votes that wait in its inbox at a step boundary are shown to it as one
 * batched input (docs/workflows.md, "Votes"). Nothing is sent for a vote on
 * one's own proposal, or when the proposer is not an agent member.
 */
async function notifyProposer(ctx: ToolContext, seat: TeamSeat, voted: VoteResult, option: string): Promise<boolean> {
  const { team } = seatOf(ctx);
  const { proposal } = voted;
  if (proposal.createdBy === seat.member.name) return false;
  const proposer = await seat.instance.member(proposal.createdBy);
  if (proposer === undefined) return false;
  const source = workspaceSource(seat.workflow, seat.tag);
  const closed = voted.closedNow ? ` Voting is over: ${statusText(voted)} (${tallyText(voted)}).` : "";
  await team.publishInbound({
    ...stamp(),
    agent: proposer.agent,
    source,
    context: workspaceContext(seat.workflow, seat.tag),
    priority: "normal",
    replyTo: source,
    text: `${seat.member.name} voted '${option}' on ${proposal.id} "${proposal.title}" (${voted.cast} of ${proposal.voters.length} voted).${closed}`,
    attachments: [],
    meta: {
      batch: `votes:${seat.workflow}:${seat.tag}`,
      proposal: proposal.id,
      voter: seat.member.name,
      option,
      ...(voted.closedNow ? { closed: voted.status.status } : {}),
    },
  });
  return true;
}

export const teamProposalCreateTool = defineTool({
  name: "team_proposal_create",
  description: `Ask the members of this workspace to vote. Options default to ${DEFAULT_OPTIONS.join("/")}; every member has one vote; you hear of each vote. The proposal is announced in the channel.`,
  input: z.object({
    title: z.string().min(1).max(500),
    options: z.array(z.string().min(1).max(100)).min(2).max(10).optional(),
  }),
  usesWorkspace: false,
  team: true,
  async run(input, ctx) {
    const { seat, team } = seatOf(ctx);
    const proposal = await seat.instance.proposals.create({
      title: input.title,
      ...(input.options === undefined ? {} : { options: input.options }),
      by: seat.member.name,
    });
    const announcement = await postToChannel(
      { publish: (envelope) => team.publishInbound(envelope) },
      { instance: seat.instance, workflow: seat.workflow, tag: seat.tag },
      {
        from: seat.member.name,
        text: `Proposal ${proposal.id}: ${proposal.title} (options: ${proposal.options.join(", ")}). Vote with team_proposal_vote.`,
      },
    );
    return ok(
      { proposal, postId: announcement.id },
      `Proposal ${proposal.id} created and announced; voters: ${proposal.voters.join(", ")}.`,
    );
  },
});

export const teamProposalVoteTool = defineTool({
  name: "team_proposal_vote",
  description:
    "Vote on a proposal of this workspace (one vote per member; voting again changes your vote while it is open).",
  input: z.object({ id: proposalIdSchema, option: z.string().min(1).max(100) }),
  usesWorkspace: false,
  team: true,
  async run(input, ctx) {
    const { seat } = seatOf(ctx);
    const voted = await seat.instance.proposals.vote({ id: input.id, voter: seat.member.name, option: input.option });
    const notified = await notifyProposer(ctx, seat, voted, input.option);
    const { closedNow, ...state } = voted;
    return ok(
      { ...state, closedNow, proposerNotified: notified },
      `Voted '${input.option}' on ${input.id}: ${statusText(voted)}; ${tallyText(voted)}.`,
    );
  },
});

export const teamProposalStatusTool = defineTool({
  name: "team_proposal_status",
  description: "A proposal's status (open, decided, tied), its tally and who voted what.",
  input: z.object({ id: proposalIdSchema }),
  usesWorkspace: false,
  team: true,
  async run(input, ctx) {
    const { seat } = seatOf(ctx);
    const state = await seat.instance.proposals.get(input.id);
    const votes = Object.entries(state.votes)
      .map(([voter, option]) => `${voter}: ${option}`)
      .join(", ");
    return ok(
      state,
      `${state.proposal.id} "${state.proposal.title}": ${statusText(state)}; ${tallyText(state)}${votes === "" ? "" : `; votes: ${votes}`}.`,
    );
  },
});
