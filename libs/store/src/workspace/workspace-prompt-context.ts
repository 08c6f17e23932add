import type { ChannelEntry } from "@moniro/envelopes";
import type {
  WorkspaceContextPort,
  WorkspacePromptEntry,
  WorkspacePromptSnapshot,
  WorkspaceRefusal,
} from "@moniro/ports";
import { membershipOf, splitContext } from "./workspace-membership.js";
import type { WorkspaceStore } from "./workspace-port.js";

/** Stream ids `<ms>-<seq>` in order. */
export function compareEntryIds(a: string, b: string): number {
  const [aMs = "0", aSeq = "0"] = a.split("-");
  const [bMs = "0", bSeq = "0"] = b.split("-");
  const ms = BigInt(aMs) - BigInt(bMs);
  if (ms !== 0n) return ms < 0n ? -1 : 1;
  const seq = BigInt(aSeq) - BigInt(bSeq);
  return seq === 0n ? 0 : seq < 0n ? -1 : 1;
}

const line = (entry: ChannelEntry): WorkspacePromptEntry => ({
  id: entry.id,
  from: entry.from,
  text: entry.text,
  at: entry.at,
});

/**
 * The loop's WorkspaceContextPort over a WorkspaceStore (Redis in the runner,
 * in memory in tests): one state read for the membership, then the channel's
 * newest posts, the member's cursor, its inbox and the documents together.
 */
export class StoreWorkspaceContext implements WorkspaceContextPort {
  constructor(private readonly store: WorkspaceStore) {}

  async promptSnapshot(
    agent: string,
    context: string,
    options: { channel: number; mentions: number; documents: number },
  ): Promise<WorkspacePromptSnapshot | { refused: WorkspaceRefusal }> {
    const workspace = splitContext(context);
    if (!workspace) return { refused: "workflow_not_running" };
    const membership = await membershipOf(this.store, agent, workspace);
    if (!membership.ok) return { refused: membership.refused };
    const { instance, member, members } = membership;
    const [last, seen, inbox, documents] = await Promise.all([
      instance.channel.last(options.channel),
      instance.channel.seen(member.name),
      instance.channel.inbox(member.name, options.mentions),
      instance.documents.list(),
    ]);
    const unseen =
      seen === undefined ? last.entries : last.entries.filter((entry) => compareEntryIds(entry.id, seen) > 0);
    // Every one of the newest N is unseen: older unseen posts may come before them.
    const moreUnseen = last.entries.length >= options.channel && unseen.length === last.entries.length;
    return {
      workflow: workspace.workflow,
      tag: workspace.tag,
      member: {
        name: member.name,
        ...(member.role ? { role: member.role } : {}),
        ...(member.promptAppend ? { promptAppend: member.promptAppend } : {}),
      },
      members: members
        .filter((other) => other.name !== member.name)
        .map((other) => ({ name: other.name, ...(other.role ? { role: other.role } : {}) })),
      unseen: unseen.map(line),
      moreUnseen,
      ...(seen === undefined ? {} : { seenBefore: seen }),
      mentions: inbox.entries.map(line),
      unreadMentions: inbox.unread,
      documents: documents
        .slice(0, options.documents)
        .map(({ name, version, bytes, updatedBy }) => ({ name, version, bytes, updatedBy })),
    };
  }

  async markSeen(context: string, member: string, cursor: string): Promise<void> {
    const workspace = splitContext(context);
    if (!workspace) return;
    await this.store.instance(workspace.workflow, workspace.tag).channel.markSeen(member, cursor);
  }
}
