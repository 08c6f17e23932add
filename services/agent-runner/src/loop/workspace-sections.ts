import type { WorkspacePromptEntry, WorkspacePromptSnapshot, WorkspaceRefusal } from "@moniro/ports";
import { clipLine, estimateTokens, linesWithin } from "./personal-sections.js";

/** Unread @mentions first (someone waits on them), then the channel, then the document list. */
const SHARES = { mentions: 0.4, channel: 0.45, documents: 0.15 } as const;

const postLine = (entry: WorkspacePromptEntry) => `- [${entry.id}] ${entry.from}: ${clipLine(entry.text).text}`;

/** The newest lines that fit `tokens`, in their order; how many were left out. */
function newestWithin(lines: readonly string[], tokens: number): { shown: string[]; hidden: number } {
  let used = 0;
  let start = lines.length;
  while (start > 0) {
    const cost = estimateTokens(lines[start - 1] ?? "") + 1;
    if (used + cost > tokens) break;
    used += cost;
    start -= 1;
  }
  return { shown: lines.slice(start), hidden: start };
}

function oldestWithin(lines: readonly string[], tokens: number): { shown: string[]; hidden: number } {
  const count = linesWithin(lines, tokens);
  return { shown: lines.slice(0, count), hidden: lines.length - count };
}

/**
 * The workspace part of a workspace cycle's system prompt (issue 14): who the
 * agent is there, its unread @mentions, the channel posts since it last
 * looked, and the shared documents, within `maxTokens` (estimated). What does
 * not fit is counted in a line naming the team tool that reaches it. Pure:
 * the snapshot was read once for the cycle.
 */
export function workspaceSection(snapshot: WorkspacePromptSnapshot, maxTokens: number): string {
  const instance = `${snapshot.workflow}:${snapshot.tag}`;
  const you = `${snapshot.member.name}${snapshot.member.role ? ` (${snapshot.member.role})` : ""}`;
  const others = snapshot.members.map((member) => `${member.name}${member.role ? ` (${member.role})` : ""}`);
  const head = [
    `## Workspace ${instance}`,
    `This input comes from the workspace of workflow instance ${instance}. Here you are ${you}${
      others.length > 0 ? `; the other members are ${others.join(", ")}` : ""
    }.`,
    "Post to its channel with channel_send (an @name wakes that member); a post without a mention is read by the others when they next work here.",
  ];

  const mentionLines = snapshot.mentions.map(postLine);
  const mentions = oldestWithin(mentionLines, Math.floor(maxTokens * SHARES.mentions));
  const mentionsHidden = snapshot.unreadMentions - mentions.shown.length;
  const channel = newestWithin(snapshot.unseen.map(postLine), Math.floor(maxTokens * SHARES.channel));
  const documentLines = snapshot.documents.map(
    (document) => `- ${document.name} (v${document.version}, ${document.bytes} bytes, by ${document.updatedBy})`,
  );
  const documents = oldestWithin(documentLines, Math.floor(maxTokens * SHARES.documents));

  const parts = [head.join("\n")];
  if (snapshot.unreadMentions > 0) {
    parts.push(
      [
        `### Unread @mentions of you (${snapshot.unreadMentions})`,
        ...mentions.shown,
        ...(mentionsHidden > 0 ? [`(${mentionsHidden} more: inbox lists them.)`] : []),
        "(inbox_ack marks them read once handled.)",
      ].join("\n"),
    );
  }
  const channelHidden = channel.hidden > 0 || snapshot.moreUnseen;
  if (channel.shown.length > 0 || channelHidden) {
    parts.push(
      [
        "### Channel since you last looked",
        ...(channelHidden
          ? [
              `(Earlier unseen posts are not shown: channel_read${
                snapshot.seenBefore ? ` with after '${snapshot.seenBefore}'` : ""
              } reads them.)`,
            ]
          : []),
        ...channel.shown,
      ].join("\n"),
    );
  } else {
    parts.push("### Channel since you last looked\n(Nothing new.)");
  }
  if (snapshot.documents.length > 0) {
    parts.push(
      [
        "### Shared documents",
        ...documents.shown,
        ...(documents.hidden > 0 ? [`(${documents.hidden} more: team_doc_list.)`] : []),
        "(team_doc_read gives a document's text.)",
      ].join("\n"),
    );
  }
  return parts.join("\n\n");
}

/** A workspace cycle's workspace as read at its start: the snapshot, or why there is none. */
export type CycleWorkspace =
  | { context: string; snapshot: WorkspacePromptSnapshot }
  | { context: string; refused: WorkspaceRefusal };

/** The cycle offers the team tools only when it works in a workspace it is a member of. */
export function inWorkspace(workspace: CycleWorkspace | undefined): boolean {
  return workspace !== undefined && "snapshot" in workspace;
}
