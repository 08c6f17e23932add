import { NAME_PATTERN, TAG_PATTERN, workspaceMemberSchema } from "@moniro/envelopes";
import type { Clock } from "@moniro/ports";
import { errorFromCode } from "../errors.js";
import type { WorkspaceKeys } from "../keys.js";
import type { RedisClient } from "../redis-client.js";
import { runScript, type ScriptName } from "../scripts/loader.js";
import { WorkspaceError, type WorkspaceScriptContext } from "./workspace-error.js";
import type { NamedMember } from "./workspace-port.js";

/** Sizes a workspace holds to; every one can be set per store. */
export interface WorkspaceLimits {
  /** Characters of one channel post (default 32,000): longer text belongs in a document. */
  maxPostChars: number;
  /** UTF-8 bytes of one document (default 256 KiB). */
  maxDocumentBytes: number;
  /** Documents of one instance (default 200). */
  maxDocuments: number;
}

export const DEFAULT_WORKSPACE_LIMITS: WorkspaceLimits = {
  maxPostChars: 32_000,
  maxDocumentBytes: 256 * 1024,
  maxDocuments: 200,
};

/** What every part of one instance's store shares. */
export interface WorkspaceContext {
  redis: RedisClient;
  keys: WorkspaceKeys;
  workflow: string;
  tag: string;
  clock: Clock;
  limits: WorkspaceLimits;
}

/** Runs a workspace script; a negative code becomes its WorkspaceError (through `errorFromCode`). */
export async function runWorkspaceScript(
  context: WorkspaceContext,
  script: ScriptName,
  keys: readonly string[],
  args: ReadonlyArray<string | number>,
  about: Omit<WorkspaceScriptContext, "workflow" | "tag"> = {},
): Promise<unknown> {
  const result = await runScript(context.redis, script, keys, args);
  if (typeof result === "number" && result < 0) {
    throw errorFromCode(result, { script, workspace: { workflow: context.workflow, tag: context.tag, ...about } });
  }
  return result;
}

/** A member's name (an agent in the workflow file) or a tag from outside (`http:<user>`). */
export function posterKind(from: string): "member" | "tag" {
  if (NAME_PATTERN.test(from)) return "member";
  if (TAG_PATTERN.test(from)) return "tag";
  throw new WorkspaceError(
    "bad_member",
    `'${from}' is neither a member name (a-z, 0-9, '_', '-') nor a tag such as 'http:alice'`,
    { from },
  );
}

export function checkMember(member: string): string {
  if (!NAME_PATTERN.test(member)) {
    throw new WorkspaceError(
      "bad_member",
      `'${member}' is not a member name: 1-63 characters of a-z, 0-9, '_' or '-', starting with a letter or digit`,
      { member },
    );
  }
  return member;
}

/** An instance's workflow and tag become key parts: both must be names. */
export function checkInstance(workflow: string, tag: string): void {
  for (const [what, value] of [
    ["workflow", workflow],
    ["tag", tag],
  ] as const) {
    if (!NAME_PATTERN.test(value)) {
      throw new WorkspaceError(
        "bad_instance",
        `${what} '${value}' must be 1-63 characters of a-z, 0-9, '_' or '-', starting with a letter or digit`,
        { workflow, tag },
      );
    }
  }
}

/** The members a start is given: at least one, each named once, each a valid member record. */
export function checkMembers(instance: string, members: readonly NamedMember[]): NamedMember[] {
  if (members.length === 0) {
    throw new WorkspaceError("bad_member", `${instance} needs at least one member to start`, {});
  }
  const seen = new Set<string>();
  return members.map(({ name, ...member }) => {
    checkMember(name);
    if (seen.has(name)) throw new WorkspaceError("bad_member", `member '${name}' is listed twice`, { member: name });
    seen.add(name);
    const checked = workspaceMemberSchema.safeParse(member);
    if (!checked.success) {
      throw new WorkspaceError("bad_member", `member '${name}': ${checked.error.issues[0]?.message}`, { member: name });
    }
    return { name, ...checked.data };
  });
}
