import { decode, type Proposal, type ProposalStatus, proposalSchema, proposalStatusSchema } from "@moniro/envelopes";
import { corruptEntry } from "../errors.js";
import { checkMember, posterKind, runWorkspaceScript, type WorkspaceContext } from "./workspace-context.js";
import { WorkspaceError } from "./workspace-error.js";
import type { ProposalState, Proposals, VoteResult } from "./workspace-port.js";

export const DEFAULT_OPTIONS = ["yes", "no"] as const;
export const MAX_OPTIONS = 10;

/** A new proposal's title and options (default yes / no), checked; throws a WorkspaceError `bad_proposal`. */
export function checkProposal(input: { title: string; options?: readonly string[]; by: string }): {
  title: string;
  options: string[];
} {
  posterKind(input.by);
  const title = input.title.trim();
  if (title === "" || title.length > 500) {
    throw new WorkspaceError("bad_proposal", "a proposal needs a title of 1-500 characters", { title: input.title });
  }
  const options = [...(input.options ?? DEFAULT_OPTIONS)].map((option) => option.trim());
  if (options.length < 2 || options.length > MAX_OPTIONS) {
    throw new WorkspaceError("bad_proposal", `a proposal has 2-${MAX_OPTIONS} options (got ${options.length})`, {
      options,
    });
  }
  if (options.some((option) => option === "" || option.length > 100) || new Set(options).size !== options.length) {
    throw new WorkspaceError("bad_proposal", "each option is 1-100 characters and differs from the others", {
      options,
    });
  }
  return { title, options };
}

/**
 * Group decisions of one instance. Every member when the proposal is made
 * is a voter with one vote (a later vote replaces an earlier one while the
 * proposal is open). The rule, applied atomically with each vote
 * (`voteProposal-4.lua`): an option voted for by more than half of the
 * voters is decided at once; once every voter has voted, the option with the
 * most votes is decided, or the proposal is tied when two or more share the
 * most. A closed proposal takes no more votes.
 */
export class WorkspaceProposals implements Proposals {
  constructor(private readonly context: WorkspaceContext) {}

  async create(input: { title: string; options?: readonly string[]; by: string }): Promise<Proposal> {
    const { title, options } = checkProposal(input);
    const body = JSON.stringify({ title, options, createdBy: input.by, createdAt: this.context.clock.now() });
    const { keys } = this.context;
    const json = await runWorkspaceScript(
      this.context,
      "createProposal",
      [keys.state, keys.members, keys.proposals, keys.proposalStatus],
      [body],
    );
    return this.decodeProposal("(new)", String(json));
  }

  /** Records `voter`'s vote and applies the closing rule; refused when the proposal is closed. */
  async vote(input: { id: string; voter: string; option: string }): Promise<VoteResult> {
    const { id, option } = input;
    const voter = checkMember(input.voter);
    const { keys, clock } = this.context;
    const reply = (await runWorkspaceScript(
      this.context,
      "voteProposal",
      [keys.state, keys.proposals, keys.proposalStatus, keys.votes],
      [id, voter, option, clock.now()],
      { proposal: id, member: voter, option },
    )) as Array<string | number>;
    const status = this.decodeStatus(id, String(reply[0]));
    const tally: Record<string, number> = {};
    for (let i = 2; i + 1 < reply.length; i += 2) tally[String(reply[i])] = Number(reply[i + 1]);
    const proposal = await this.definition(id);
    return { proposal, status, tally, cast: Number(reply[1]), closedNow: status.status !== "open" };
  }

  /** One proposal with its status and tally. */
  async get(id: string): Promise<ProposalState & { votes: Record<string, string> }> {
    const { redis, keys } = this.context;
    const proposal = await this.definition(id);
    const [statusJson, votes] = await Promise.all([
      redis.hget(keys.proposalStatus, id),
      proposal.voters.length > 0
        ? redis.hmget(keys.votes, ...proposal.voters.map((voter) => `${id}:${voter}`))
        : Promise.resolve([]),
    ]);
    const byVoter: Record<string, string> = {};
    const tally: Record<string, number> = Object.fromEntries(proposal.options.map((option) => [option, 0]));
    proposal.voters.forEach((voter, index) => {
      const vote = votes[index];
      if (vote === null || vote === undefined) return;
      byVoter[voter] = vote;
      tally[vote] = (tally[vote] ?? 0) + 1;
    });
    return {
      proposal,
      status: this.decodeStatus(id, statusJson ?? '{"status":"open"}'),
      tally,
      cast: Object.keys(byVoter).length,
      votes: byVoter,
    };
  }

  /** Every proposal with its status, oldest first. */
  async list(): Promise<Array<{ proposal: Proposal; status: ProposalStatus }>> {
    const { redis, keys } = this.context;
    const [proposals, statuses] = await Promise.all([
      redis.hgetall(keys.proposals),
      redis.hgetall(keys.proposalStatus),
    ]);
    return Object.entries(proposals)
      .map(([id, json]) => ({
        proposal: this.decodeProposal(id, json),
        status: this.decodeStatus(id, statuses[id] ?? '{"status":"open"}'),
      }))
      .sort((a, b) => Number(a.proposal.id.slice(1)) - Number(b.proposal.id.slice(1)));
  }

  private async definition(id: string): Promise<Proposal> {
    const json = await this.context.redis.hget(this.context.keys.proposals, id);
    if (json === null) {
      throw new WorkspaceError(
        "unknown_proposal",
        `${this.context.workflow}:${this.context.tag} has no proposal '${id}'`,
        {
          proposal: id,
        },
      );
    }
    return this.decodeProposal(id, json);
  }

  private decodeProposal(id: string, json: string): Proposal {
    const decoded = decode(proposalSchema, json, "proposal");
    if (!decoded.ok) throw corruptEntry(this.context.keys.proposals, id, decoded.error.message);
    return decoded.value;
  }

  private decodeStatus(id: string, json: string): ProposalStatus {
    const decoded = decode(proposalStatusSchema, json, "proposal status");
    if (!decoded.ok) throw corruptEntry(this.context.keys.proposalStatus, id, decoded.error.message);
    return decoded.value;
  }
}
