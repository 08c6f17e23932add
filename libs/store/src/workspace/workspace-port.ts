import type { ChannelEntry, Proposal, ProposalStatus, WorkspaceMember, WorkspaceStatus } from "@moniro/envelopes";
import type { WorkspaceRefusal } from "@moniro/ports";

/**
 * The workspace store as a port: `RedisWorkspaceStore` implements it over
 * Redis, `InMemoryWorkspaceStore` (`@moniro/store/test`) in memory, and one
 * contract suite (`describeWorkspaceContract`) runs against both, so the fake
 * cannot drift from Redis. Semantics: docs/workflows.md "The workspace store".
 */
export interface WorkspaceStore {
  /** One instance's store; throws a WorkspaceError `bad_instance` for names that are not subject tokens. */
  instance(workflow: string, tag: string): Workspace;
  /** Every instance with state (running, or stopped and kept), by name. */
  list(): Promise<WorkspaceState[]>;
}

export type NamedMember = WorkspaceMember & { name: string };

/** An instance's state as stored: status, times, members. */
export interface WorkspaceState {
  workflow: string;
  tag: string;
  status: WorkspaceStatus;
  createdAt: number;
  startedAt: number;
  stoppedAt?: number;
  members: NamedMember[];
}

export interface Workspace {
  readonly name: string;
  readonly channel: Channel;
  readonly documents: Documents;
  readonly proposals: Proposals;
  start(members: readonly NamedMember[]): Promise<{ started: boolean }>;
  stop(): Promise<{ stopped: boolean }>;
  discard(): Promise<void>;
  state(): Promise<WorkspaceState | null>;
  isRunning(): Promise<boolean>;
  members(): Promise<NamedMember[]>;
  member(name: string): Promise<NamedMember | undefined>;
  /**
   * What the member an agent plays sees when it works here, read at once
   * (membership, members, channel, cursor, inbox, documents), or why it may
   * not work here. Read only.
   */
  memberView(agent: string, options: MemberViewOptions): Promise<MemberView | { refused: WorkspaceRefusal }>;
}

export interface MemberViewOptions {
  /** How many of the newest posts (1 or more). */
  channel: number;
  /** How many of the oldest unread @mentions (1 or more). */
  mentions: number;
}

/** See `Workspace.memberView`. */
export interface MemberView {
  /** The member the agent plays (the first by name if it plays several). */
  member: NamedMember;
  /** Every member, by name. */
  members: NamedMember[];
  /** The newest posts, oldest first. */
  newest: ChannelEntry[];
  /** The member's last-seen cursor (undefined: nothing seen yet). */
  seen: string | undefined;
  /** Its oldest unread @mentions, oldest first, and how many are unread in all. */
  mentions: ChannelEntry[];
  unread: number;
  /** Every document, by name. */
  documents: DocumentInfo[];
}

/** What a post reached: its id, the members it notified, and mentioned names that are not members. */
export interface PostResult {
  id: string;
  /** Members @mentioned (the sender excluded): each has it as an unread mention. */
  mentions: string[];
  /** @names that are not members of this instance: nobody was notified for them; the post is kept. */
  unreached: string[];
}

/** A post as a member or tag (`from`), or as the member an agent plays (`agent`, checked as it posts). */
export type PostInput = { from: string; text: string } | { agent: string; text: string };

/** What `deliver` did: the post, its sender (a member name or tag), and whom to push it to. */
export interface Delivery {
  post: PostResult;
  from: string;
  /** The notified members (`post.mentions`, in order) with the agent that plays each. */
  notify: Array<{ member: string; agent: string }>;
}

/**
 * A stream entry of a channel that is not a post it can decode (written by something else, or by an
 * older version): its id and why it cannot be read. `Channel.scan` returns it in its place.
 */
export interface UnreadableChannelEntry {
  id: string;
  unreadable: string;
}

/** What `Channel.scan` returns for each entry: the post, or the entry that cannot be read. */
export type ChannelItem = ChannelEntry | UnreadableChannelEntry;

export function isUnreadable(item: ChannelItem): item is UnreadableChannelEntry {
  return "unreadable" in item;
}

export interface ChannelPage {
  entries: ChannelEntry[];
  /** The id of the last entry returned (read after it for more), or the cursor given when nothing was new. */
  cursor: string | undefined;
}

export interface Channel {
  post(input: { from: string; text: string }): Promise<PostResult>;
  /**
   * `post`, naming the agent of each notified member too; with `agent`, posts
   * as the member that agent plays (refused `not_a_member` naming the agent
   * when it plays none), the check and the post in one step.
   */
  deliver(input: PostInput): Promise<Delivery>;
  read(options?: { after?: string | undefined; limit?: number }): Promise<ChannelPage>;
  /**
   * As `read`, but an entry that does not decode is returned in its place as an
   * UnreadableChannelEntry instead of failing the page (the SSE stream reports it and goes on).
   */
  scan(options?: { after?: string | undefined; limit?: number }): Promise<{ entries: ChannelItem[] }>;
  last(count: number): Promise<ChannelPage>;
  /** The id of the channel's newest entry, decodable or not (undefined: none). */
  lastId(): Promise<string | undefined>;
  length(): Promise<number>;
  seen(member: string): Promise<string | undefined>;
  unseen(member: string, limit?: number): Promise<ChannelPage>;
  markSeen(member: string, id: string): Promise<string>;
  inbox(member: string, limit?: number): Promise<{ entries: ChannelEntry[]; unread: number }>;
  ack(member: string, ids: readonly string[]): Promise<number>;
  ackUpTo(member: string, id: string): Promise<number>;
}

export interface DocumentInfo {
  name: string;
  version: number;
  bytes: number;
  updatedBy: string;
  updatedAt: number;
}
export type Document = DocumentInfo & { text: string };

export interface WriteDocumentOptions {
  /** Who writes: a member, or a tag from outside. */
  by: string;
  /** `set` (the default) replaces the text, `append` adds to its end (or creates it). */
  mode?: "set" | "append";
  /** Write only if the document is at this version (0: only if it does not exist yet). */
  ifVersion?: number;
}

export interface Documents {
  list(): Promise<DocumentInfo[]>;
  read(name: string): Promise<Document>;
  write(name: string, text: string, options: WriteDocumentOptions): Promise<{ version: number; bytes: number }>;
}

export interface ProposalState {
  proposal: Proposal;
  status: ProposalStatus;
  /** Votes per option (every option, 0 when none). */
  tally: Record<string, number>;
  /** How many voters have voted. */
  cast: number;
}

export type VoteResult = ProposalState & {
  /** This vote closed the proposal (decided or tied): the proposer should hear of it. */
  closedNow: boolean;
};

export interface Proposals {
  create(input: { title: string; options?: readonly string[]; by: string }): Promise<Proposal>;
  vote(input: { id: string; voter: string; option: string }): Promise<VoteResult>;
  get(id: string): Promise<ProposalState & { votes: Record<string, string> }>;
  list(): Promise<Array<{ proposal: Proposal; status: ProposalStatus }>>;
}
