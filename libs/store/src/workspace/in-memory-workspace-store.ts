import {
  type ChannelEntry,
  type Proposal,
  type ProposalStatus,
  parseMentions,
  type WorkspaceStatus,
} from "@moniro/envelopes";
import { type Clock, systemClock, type WorkspaceRefusal } from "@moniro/ports";
import { errorFromCode } from "../errors.js";
import type { ScriptName } from "../scripts/loader.js";
import { checkCursor, checkLimit, checkPost, DEFAULT_READ_LIMIT } from "./workspace-channel.js";
import {
  checkInstance,
  checkMember,
  checkMembers,
  DEFAULT_WORKSPACE_LIMITS,
  type WorkspaceLimits,
} from "./workspace-context.js";
import { checkDocumentName, checkDocumentWrite } from "./workspace-documents.js";
import { WORKSPACE_SCRIPT_CODES, WorkspaceError, type WorkspaceScriptContext } from "./workspace-error.js";
import type {
  Channel,
  ChannelItem,
  ChannelPage,
  Delivery,
  Document,
  DocumentInfo,
  Documents,
  MemberView,
  MemberViewOptions,
  NamedMember,
  PostInput,
  PostResult,
  ProposalState,
  Proposals,
  VoteResult,
  Workspace,
  WorkspaceState,
  WorkspaceStore,
  WriteDocumentOptions,
} from "./workspace-port.js";
import { checkProposal } from "./workspace-proposals.js";

interface Data {
  state?: { status: WorkspaceStatus; createdAt: number; startedAt: number; stoppedAt?: number; proposalSeq: number };
  members: Map<string, NamedMember>;
  channel: ChannelEntry[];
  last: [number, number];
  seen: Map<string, string>;
  mentions: Map<string, string[]>;
  docs: Map<string, Document>;
  proposals: Map<string, Proposal>;
  status: Map<string, ProposalStatus>;
  votes: Map<string, string>;
}

function emptyData(): Data {
  return {
    members: new Map(),
    channel: [],
    last: [0, 0],
    seen: new Map(),
    mentions: new Map(),
    docs: new Map(),
    proposals: new Map(),
    status: new Map(),
    votes: new Map(),
  };
}

function idParts(id: string): [number, number] {
  const [ms = "0", seq = "0"] = id.split("-");
  return [Number(ms), Number(seq)];
}

function idAfter(a: string, b: string): boolean {
  const [ams, aseq] = idParts(a);
  const [bms, bseq] = idParts(b);
  return ams > bms || (ams === bms && aseq > bseq);
}

const copy = <T>(value: T): T => structuredClone(value);

/**
 * The workspace store in memory, for unit tests of code that uses the port.
 * It passes the same contract suite as RedisWorkspaceStore
 * (`describeWorkspaceContract`) and refuses with the same errors.
 */
export class InMemoryWorkspaceStore implements WorkspaceStore {
  private readonly data = new Map<string, Data>();
  private readonly clock: Clock;
  private readonly limits: WorkspaceLimits;

  constructor(options: { clock?: Clock; limits?: Partial<WorkspaceLimits> } = {}) {
    this.clock = options.clock ?? systemClock;
    this.limits = { ...DEFAULT_WORKSPACE_LIMITS, ...options.limits };
  }

  instance(workflow: string, tag: string): Workspace {
    checkInstance(workflow, tag);
    const name = `${workflow}:${tag}`;
    const data = () => {
      let found = this.data.get(name);
      if (!found) {
        found = emptyData();
        this.data.set(name, found);
      }
      return found;
    };
    return new InMemoryWorkspace({ workflow, tag, data, clock: this.clock, limits: this.limits });
  }

  async list(): Promise<WorkspaceState[]> {
    const names = [...this.data.entries()].filter(([, data]) => data.state).map(([name]) => name);
    const states = await Promise.all(
      names.sort().map((name) => {
        const [workflow = "", tag = ""] = name.split(":");
        return this.instance(workflow, tag).state();
      }),
    );
    return states.filter((state): state is WorkspaceState => state !== null);
  }
}

interface Context {
  workflow: string;
  tag: string;
  data: () => Data;
  clock: Clock;
  limits: WorkspaceLimits;
}

/** The error a workspace script would have returned (the same messages: errorFromCode). */
function refused(context: Context, script: ScriptName, code: number, about: Partial<WorkspaceScriptContext> = {}) {
  return errorFromCode(code, { script, workspace: { workflow: context.workflow, tag: context.tag, ...about } });
}

function requireRunning(context: Context, script: ScriptName): Data {
  const data = context.data();
  if (data.state?.status !== "running") throw refused(context, script, WORKSPACE_SCRIPT_CODES.notRunning);
  return data;
}

class InMemoryWorkspace implements Workspace {
  readonly channel: Channel;
  readonly documents: Documents;
  readonly proposals: Proposals;

  constructor(private readonly context: Context) {
    this.channel = new InMemoryChannel(context);
    this.documents = new InMemoryDocuments(context);
    this.proposals = new InMemoryProposals(context);
  }

  get name(): string {
    return `${this.context.workflow}:${this.context.tag}`;
  }

  async start(members: readonly NamedMember[]): Promise<{ started: boolean }> {
    const checked = checkMembers(this.name, members);
    const data = this.context.data();
    if (data.state?.status === "running") return { started: false };
    const now = this.context.clock.now();
    data.state = {
      status: "running",
      createdAt: data.state?.createdAt ?? now,
      startedAt: now,
      proposalSeq: data.state?.proposalSeq ?? 0,
    };
    data.members = new Map(checked.map((member) => [member.name, member]));
    return { started: true };
  }

  async stop(): Promise<{ stopped: boolean }> {
    const data = this.context.data();
    if (data.state?.status !== "running") return { stopped: false };
    data.state = { ...data.state, status: "stopped", stoppedAt: this.context.clock.now() };
    return { stopped: true };
  }

  async discard(): Promise<void> {
    const data = this.context.data();
    if (data.state?.status === "running") {
      throw refused(this.context, "discardWorkspace", WORKSPACE_SCRIPT_CODES.workspaceRunning);
    }
    Object.assign(data, emptyData(), { state: undefined });
  }

  async state(): Promise<WorkspaceState | null> {
    const { state } = this.context.data();
    if (!state) return null;
    const { proposalSeq: _seq, ...shown } = state;
    return { workflow: this.context.workflow, tag: this.context.tag, ...shown, members: await this.members() };
  }

  async isRunning(): Promise<boolean> {
    return this.context.data().state?.status === "running";
  }

  async members(): Promise<NamedMember[]> {
    return copy([...this.context.data().members.values()].sort((a, b) => a.name.localeCompare(b.name)));
  }

  async member(name: string): Promise<NamedMember | undefined> {
    return copy(this.context.data().members.get(checkMember(name)));
  }

  async memberView(agent: string, options: MemberViewOptions): Promise<MemberView | { refused: WorkspaceRefusal }> {
    checkLimit(options.channel, "channel");
    checkLimit(options.mentions, "mentions");
    const data = this.context.data();
    if (data.state?.status !== "running") return { refused: "workflow_not_running" };
    const name = memberPlayedBy(data.members, agent);
    const member = name === undefined ? undefined : data.members.get(name);
    if (name === undefined || member === undefined) return { refused: "not_a_participant" };
    const inbox = await this.channel.inbox(name, options.mentions);
    return {
      member: copy(member),
      members: await this.members(),
      newest: (await this.channel.last(options.channel)).entries,
      seen: data.seen.get(name),
      mentions: inbox.entries,
      unread: inbox.unread,
      documents: await this.documents.list(),
    };
  }
}

/** The member `agent` plays (the first by name when it plays several), as `postChannel-4.lua` finds it. */
function memberPlayedBy(members: ReadonlyMap<string, NamedMember>, agent: string): string | undefined {
  return [...members.values()]
    .filter((member) => member.agent === agent)
    .map((member) => member.name)
    .sort()[0];
}

class InMemoryChannel implements Channel {
  constructor(private readonly context: Context) {}

  async post(input: { from: string; text: string }): Promise<PostResult> {
    return (await this.deliver(input)).post;
  }

  async deliver(input: PostInput): Promise<Delivery> {
    const byAgent = "agent" in input;
    const sender = byAgent ? checkMember(input.agent) : input.from;
    const kind = checkPost(sender, input.text, this.context.limits.maxPostChars);
    const data = requireRunning(this.context, "postChannel");
    const from = byAgent ? memberPlayedBy(data.members, sender) : sender;
    if (from === undefined || (kind === "member" && !data.members.has(from))) {
      throw refused(this.context, "postChannel", WORKSPACE_SCRIPT_CODES.notAMember, { member: sender });
    }
    const mentions: string[] = [];
    const unreached: string[] = [];
    for (const name of parseMentions(input.text)) {
      if (name === from) continue;
      (data.members.has(name) ? mentions : unreached).push(name);
    }
    const now = this.context.clock.now();
    const [lastMs, lastSeq] = data.last;
    data.last = now > lastMs ? [now, 0] : [lastMs, lastSeq + 1];
    const id = `${data.last[0]}-${data.last[1]}`;
    data.channel.push({ id, from, text: input.text, mentions, at: now });
    for (const name of mentions) data.mentions.set(name, [...(data.mentions.get(name) ?? []), id]);
    const notify = mentions.map((member) => ({ member, agent: data.members.get(member)?.agent ?? member }));
    return { post: { id, mentions, unreached }, from, notify };
  }

  async read(options: { after?: string | undefined; limit?: number } = {}): Promise<ChannelPage> {
    const limit = checkLimit(options.limit ?? DEFAULT_READ_LIMIT, "limit");
    const after = options.after === undefined ? undefined : checkCursor(options.after);
    const channel = this.context.data().channel;
    const entries = channel.filter((entry) => after === undefined || idAfter(entry.id, after)).slice(0, limit);
    return { entries: copy(entries), cursor: entries.at(-1)?.id ?? options.after };
  }

  async scan(options: { after?: string | undefined; limit?: number } = {}): Promise<{ entries: ChannelItem[] }> {
    return { entries: (await this.read(options)).entries };
  }

  async lastId(): Promise<string | undefined> {
    return this.context.data().channel.at(-1)?.id;
  }

  async last(count: number): Promise<ChannelPage> {
    const entries = this.context.data().channel.slice(-checkLimit(count, "count"));
    return { entries: copy(entries), cursor: entries.at(-1)?.id };
  }

  async length(): Promise<number> {
    return this.context.data().channel.length;
  }

  async seen(member: string): Promise<string | undefined> {
    return this.context.data().seen.get(checkMember(member));
  }

  async unseen(member: string, limit = DEFAULT_READ_LIMIT): Promise<ChannelPage> {
    return this.read({ after: await this.seen(member), limit });
  }

  async markSeen(member: string, id: string): Promise<string> {
    checkMember(member);
    checkCursor(id, "id");
    const seen = this.context.data().seen;
    const current = seen.get(member);
    if (current !== undefined && !idAfter(id, current)) return current;
    seen.set(member, id);
    return id;
  }

  async inbox(member: string, limit = 50): Promise<{ entries: ChannelEntry[]; unread: number }> {
    checkMember(member);
    checkLimit(limit, "limit");
    const data = this.context.data();
    const ids = data.mentions.get(member) ?? [];
    const entries = ids
      .slice(0, limit)
      .map((id) => data.channel.find((entry) => entry.id === id))
      .filter((entry): entry is ChannelEntry => entry !== undefined);
    return { entries: copy(entries), unread: ids.length };
  }

  async ack(member: string, ids: readonly string[]): Promise<number> {
    checkMember(member);
    for (const id of ids) checkCursor(id, "id");
    const mentions = this.context.data().mentions;
    const unread = mentions.get(member) ?? [];
    const left = unread.filter((id) => !ids.includes(id));
    mentions.set(member, left);
    return unread.length - left.length;
  }

  async ackUpTo(member: string, id: string): Promise<number> {
    checkMember(member);
    checkCursor(id, "id");
    const mentions = this.context.data().mentions;
    const unread = mentions.get(member) ?? [];
    const left = unread.filter((entry) => idAfter(entry, id));
    mentions.set(member, left);
    return unread.length - left.length;
  }
}

class InMemoryDocuments implements Documents {
  constructor(private readonly context: Context) {}

  async list(): Promise<DocumentInfo[]> {
    return [...this.context.data().docs.values()]
      .map(({ text: _text, ...info }) => info)
      .sort((a, b) => a.name.localeCompare(b.name));
  }

  async read(name: string): Promise<Document> {
    checkDocumentName(name);
    const docs = this.context.data().docs;
    const doc = docs.get(name);
    if (!doc) {
      const names = [...docs.keys()].sort();
      throw new WorkspaceError(
        "unknown_document",
        `${this.context.workflow}:${this.context.tag} has no document '${name}' (${names.length > 0 ? `documents: ${names.join(", ")}` : "it has no documents yet"})`,
        { document: name },
      );
    }
    return copy(doc);
  }

  async write(name: string, text: string, options: WriteDocumentOptions): Promise<{ version: number; bytes: number }> {
    const { limits } = this.context;
    checkDocumentWrite(name, text, options, limits.maxDocumentBytes);
    const data = requireRunning(this.context, "writeDocument");
    const existing = data.docs.get(name);
    const version = existing?.version ?? 0;
    const about = { document: name, limit: limits.maxDocuments, maxBytes: limits.maxDocumentBytes };
    if (options.ifVersion !== undefined && options.ifVersion !== version) {
      throw refused(this.context, "writeDocument", WORKSPACE_SCRIPT_CODES.versionConflict, { ...about, version });
    }
    if (!existing && data.docs.size >= limits.maxDocuments) {
      throw refused(this.context, "writeDocument", WORKSPACE_SCRIPT_CODES.tooManyDocuments, about);
    }
    const full = options.mode === "append" && existing ? existing.text + text : text;
    const bytes = Buffer.byteLength(full, "utf8");
    if (bytes > limits.maxDocumentBytes) {
      throw refused(this.context, "writeDocument", WORKSPACE_SCRIPT_CODES.documentTooLarge, about);
    }
    const doc = {
      name,
      text: full,
      version: version + 1,
      bytes,
      updatedBy: options.by,
      updatedAt: this.context.clock.now(),
    };
    data.docs.set(name, doc);
    return { version: doc.version, bytes };
  }
}

class InMemoryProposals implements Proposals {
  constructor(private readonly context: Context) {}

  async create(input: { title: string; options?: readonly string[]; by: string }): Promise<Proposal> {
    const { title, options } = checkProposal(input);
    const data = requireRunning(this.context, "createProposal");
    const state = data.state as NonNullable<Data["state"]>;
    state.proposalSeq += 1;
    const proposal: Proposal = {
      id: `p${state.proposalSeq}`,
      voters: [...data.members.keys()].sort(),
      title,
      options,
      createdBy: input.by,
      createdAt: this.context.clock.now(),
    };
    data.proposals.set(proposal.id, proposal);
    data.status.set(proposal.id, { status: "open" });
    return copy(proposal);
  }

  async vote(input: { id: string; voter: string; option: string }): Promise<VoteResult> {
    const { id, option } = input;
    const voter = checkMember(input.voter);
    const data = requireRunning(this.context, "voteProposal");
    const about = { proposal: id, member: voter, option };
    const proposal = data.proposals.get(id);
    if (!proposal) throw refused(this.context, "voteProposal", WORKSPACE_SCRIPT_CODES.unknownProposal, about);
    if (data.status.get(id)?.status !== "open") {
      throw refused(this.context, "voteProposal", WORKSPACE_SCRIPT_CODES.proposalClosed, about);
    }
    if (!proposal.voters.includes(voter)) {
      throw refused(this.context, "voteProposal", WORKSPACE_SCRIPT_CODES.notAVoter, about);
    }
    if (!proposal.options.includes(option)) {
      throw refused(this.context, "voteProposal", WORKSPACE_SCRIPT_CODES.unknownOption, about);
    }
    data.votes.set(`${id}:${voter}`, option);
    const { tally, cast } = this.count(data, proposal);
    let best = "";
    let bestCount = -1;
    let shared = false;
    for (const name of proposal.options) {
      const count = tally[name] ?? 0;
      if (count > bestCount) [best, bestCount, shared] = [name, count, false];
      else if (count === bestCount) shared = true;
    }
    const n = proposal.voters.length;
    const closedAt = this.context.clock.now();
    if (bestCount * 2 > n || (cast === n && !shared))
      data.status.set(id, { status: "decided", result: best, closedAt });
    else if (cast === n) data.status.set(id, { status: "tied", closedAt });
    const status = data.status.get(id) as ProposalStatus;
    return { proposal: copy(proposal), status: copy(status), tally, cast, closedNow: status.status !== "open" };
  }

  async get(id: string): Promise<ProposalState & { votes: Record<string, string> }> {
    const data = this.context.data();
    const proposal = data.proposals.get(id);
    if (!proposal) {
      throw new WorkspaceError(
        "unknown_proposal",
        `${this.context.workflow}:${this.context.tag} has no proposal '${id}'`,
        {
          proposal: id,
        },
      );
    }
    const votes: Record<string, string> = {};
    for (const voter of proposal.voters) {
      const vote = data.votes.get(`${id}:${voter}`);
      if (vote !== undefined) votes[voter] = vote;
    }
    const { tally, cast } = this.count(data, proposal);
    return { proposal: copy(proposal), status: copy(data.status.get(id) ?? { status: "open" }), tally, cast, votes };
  }

  async list(): Promise<Array<{ proposal: Proposal; status: ProposalStatus }>> {
    const data = this.context.data();
    return [...data.proposals.values()]
      .sort((a, b) => Number(a.id.slice(1)) - Number(b.id.slice(1)))
      .map((proposal) => copy({ proposal, status: data.status.get(proposal.id) ?? { status: "open" as const } }));
  }

  private count(data: Data, proposal: Proposal): { tally: Record<string, number>; cast: number } {
    const tally: Record<string, number> = Object.fromEntries(proposal.options.map((option) => [option, 0]));
    let cast = 0;
    for (const voter of proposal.voters) {
      const vote = data.votes.get(`${proposal.id}:${voter}`);
      if (vote === undefined) continue;
      tally[vote] = (tally[vote] ?? 0) + 1;
      cast += 1;
    }
    return { tally, cast };
  }
}
