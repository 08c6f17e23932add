import type { ChannelEntry } from "@moniro/envelopes";
import type {
  WorkspaceContextPort,
  WorkspacePromptEntry,
  WorkspacePromptSnapshot,
  WorkspaceRefusal,
} from "@moniro/ports";
import { splitContext } from "./workspace-membership.js";
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
 * in memory in tests): the membership and everything the prompt shows read
 * at once (`Workspace.memberView`: one script, one round trip on Redis).
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
    const view = await this.store
      .instance(workspace.workflow, workspace.tag)
      .memberView(agent, { channel: options.channel, mentions: options.mentions });
    if ("refused" in view) return view;
    const { member, members, newest, seen } = view;
    const unseen = seen === undefined ? newest : newest.filter((entry) => compareEntryIds(entry.id, seen) > 0);
    // Every one of the newest N is unseen: older unseen posts may come before them.
    const moreUnseen = newest.length >= options.channel && unseen.length === newest.length;
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
      mentions: view.mentions.map(line),
      unreadMentions: view.unread,
      documents: view.documents
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
