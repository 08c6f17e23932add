/** One channel post as the prompt shows it. */
export interface WorkspacePromptEntry {
  /** The channel entry id (`<ms>-<seq>`): `channel_read` reads after it. */
  id: string;
  from: string;
  text: string;
  /** Epoch ms. */
  at: number;
}

/** One shared document as the prompt lists it (no text: `team_doc_read` gives it). */
export interface WorkspacePromptDocument {
  name: string;
  version: number;
  bytes: number;
  updatedBy: string;
}

/**
 * What a workspace cycle's system prompt shows of its workspace, read once
 * for the cycle: who the agent is there, the channel posts it has not seen,
 * its unread @mentions, the shared documents.
 */
export interface WorkspacePromptSnapshot {
  workflow: string;
  tag: string;
  /** The agent's member record: its member name (what others @mention), role and the workflow's `prompt.append`. */
  member: { name: string; role?: string; promptAppend?: string };
  /** The other members' names with their roles. */
  members: Array<{ name: string; role?: string }>;
  /** The newest posts after the member's last-seen cursor (at most the number asked for), oldest first. */
  unseen: WorkspacePromptEntry[];
  /** True when unseen posts older than those in `unseen` may exist (every post read was unseen). */
  moreUnseen: boolean;
  /** Where the member had read up to before (undefined: never). */
  seenBefore?: string;
  /** The oldest unread @mentions (at most the number asked for) and how many are unread in all. */
  mentions: WorkspacePromptEntry[];
  unreadMentions: number;
  documents: WorkspacePromptDocument[];
}

/** Why a workspace context is refused: the instance does not run, or the agent is not one of its members. */
export type WorkspaceRefusal = "workflow_not_running" | "not_a_participant";

/**
 * An agent's workspace context (DESIGN §6, issue 14) behind one port, so the
 * loop never holds a Redis client: the prompt's read, and moving the
 * member's "last seen" cursor once the prompt has shown the posts.
 * `context` is `<workflow>:<tag>`.
 */
export interface WorkspaceContextPort {
  /**
   * The snapshot, or the refusal when the instance does not run or the agent
   * is not a member (the cycle then runs with personal context only).
   */
  promptSnapshot(
    agent: string,
    context: string,
    options: { channel: number; mentions: number; documents: number },
  ): Promise<WorkspacePromptSnapshot | { refused: WorkspaceRefusal }>;
  /** The member has seen the channel up to `cursor` (never moves it back). */
  markSeen(context: string, member: string, cursor: string): Promise<void>;
}
