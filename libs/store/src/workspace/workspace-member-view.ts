import { decode, workspaceMemberSchema } from "@moniro/envelopes";
import type { WorkspaceRefusal } from "@moniro/ports";
import { corruptEntry } from "../errors.js";
import { runScript } from "../scripts/loader.js";
import { checkLimit, decodeChannelEntry } from "./workspace-channel.js";
import type { WorkspaceContext } from "./workspace-context.js";
import { documentsOf } from "./workspace-documents.js";
import { WORKSPACE_SCRIPT_CODES } from "./workspace-error.js";
import type { MemberView, MemberViewOptions, NamedMember } from "./workspace-port.js";

type StreamEntry = [string, string[]];

/** Pairs of a flat HGETALL reply (`[field, value, …]`) as an object. */
function hashOf(flat: readonly string[]): Record<string, string> {
  const hash: Record<string, string> = {};
  for (let i = 0; i + 1 < flat.length; i += 2) hash[flat[i] as string] = flat[i + 1] as string;
  return hash;
}

/** The members of a members hash (`key`, name → member JSON), by name. */
export function membersOf(key: string, hash: Record<string, string>): NamedMember[] {
  return Object.entries(hash)
    .map(([name, json]) => {
      const decoded = decode(workspaceMemberSchema, json, "workspace member");
      if (!decoded.ok) throw corruptEntry(key, name, decoded.error.message);
      return { name, ...decoded.value };
    })
    .sort((a, b) => a.name.localeCompare(b.name));
}

/**
 * `Workspace.memberView` over Redis: `readWorkspace-6.lua` checks that the
 * instance runs and finds the member the agent plays, then reads the
 * members, the newest posts, the member's cursor, its unread @mentions with
 * their posts, and the documents' metadata, all in one script.
 */
export async function readMemberView(
  context: WorkspaceContext,
  agent: string,
  options: MemberViewOptions,
): Promise<MemberView | { refused: WorkspaceRefusal }> {
  const { keys } = context;
  const reply = (await runScript(
    context.redis,
    "readWorkspace",
    [keys.state, keys.members, keys.channel, keys.seen, keys.mentions, keys.docMeta],
    [agent, checkLimit(options.channel, "channel"), checkLimit(options.mentions, "mentions")],
  )) as number | [string, string[], StreamEntry[], string, StreamEntry[], number, string[]];
  if (reply === WORKSPACE_SCRIPT_CODES.notRunning) return { refused: "workflow_not_running" };
  if (reply === WORKSPACE_SCRIPT_CODES.notAMember) return { refused: "not_a_participant" };
  if (typeof reply === "number") throw new Error(`readWorkspace answered ${reply}`);
  const [name, members, newest, seen, mentioned, unread, documents] = reply;
  const all = membersOf(keys.members, hashOf(members));
  const member = all.find((candidate) => candidate.name === name);
  if (!member) throw corruptEntry(keys.members, name, "the member read is not among the members");
  return {
    member,
    members: all,
    newest: newest.reverse().map((entry) => decodeChannelEntry(keys.channel, entry)),
    seen: seen === "" ? undefined : seen,
    mentions: mentioned.map((entry) => decodeChannelEntry(keys.channel, entry)),
    unread,
    documents: documentsOf(keys.docMeta, hashOf(documents)),
  };
}
