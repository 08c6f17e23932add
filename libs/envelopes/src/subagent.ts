import { createHash } from "node:crypto";
import { encodeTime } from "ulid";
import { z } from "zod";
import { NAME_PATTERN, nameSchema } from "./names.js";

/**
 * Sub-agents (docs/subagents.md). A child is named `<parent>--<id>`: defined
 * agents may not contain `--`, so no definition can take a child's name, and
 * the name stays a subject token and a Redis key token.
 */
export const CHILD_SEPARATOR = "--";

/** Longest name of an agent that can spawn, so `<parent>--<8 characters>` stays within NAME_PATTERN's 63. */
export const SPAWNING_NAME_MAX = 63 - CHILD_SEPARATOR.length - 8;

/** Whether `name` is a sub-agent's (only children carry the separator). */
export function isChildName(name: string): boolean {
  return name.includes(CHILD_SEPARATOR);
}

/**
 * A child's name from its parent's and a short id (8 lower-case letters or
 * digits); throws when the parent's name is longer than SPAWNING_NAME_MAX.
 */
export function childNameOf(parent: string, shortId: string): string {
  const name = `${parent}${CHILD_SEPARATOR}${shortId}`;
  if (parent.length > SPAWNING_NAME_MAX || !NAME_PATTERN.test(name) || isChildName(parent)) {
    throw new Error(
      `'${parent}' cannot have sub-agents: a spawning agent's name is at most ${SPAWNING_NAME_MAX} characters without '${CHILD_SEPARATOR}'`,
    );
  }
  return name;
}

/**
 * The parent of a child (`a--x1y2z3w4` → `a`); undefined for a name without the separator.
 * The separator is the last `--`: a parent's name holds no `--` but may end in `-`, and the
 * child of `a-` is `a---x1y2z3w4`, whose parent is `a-`, not the agent `a`.
 */
export function parentOfChild(name: string): string | undefined {
  const at = name.lastIndexOf(CHILD_SEPARATOR);
  return at > 0 ? name.slice(0, at) : undefined;
}

/**
 * The internal channel: an inbound envelope between a parent and its child
 * carries `meta.subagent` saying which of the two sent it and what it is.
 * - `task`: parent → child, the work (the child's first input);
 * - `report`: child → parent, the child's final answer (its last assistant text);
 * - `message`: either way, sent with the `message` tool to `agent:<other>`;
 * - `cancel`: parent → child, stop and end (never reaches the child's thread).
 */
export const SUBAGENT_KINDS = ["task", "report", "message", "cancel"] as const;
export const subagentMetaSchema = z.object({
  kind: z.enum(SUBAGENT_KINDS),
  parent: nameSchema,
  child: nameSchema,
  /** The parent's `subagent` tool call that spawned the child. */
  callId: z.string().min(1).max(200),
  /** The parent waits for the report as the tool call's result (`wait: true`). */
  wait: z.boolean().optional(),
});
export type SubagentMeta = z.infer<typeof subagentMetaSchema>;

/** `meta.subagent` of an inbound envelope, when it is a valid internal-channel one. */
export function subagentMetaOf(meta: Record<string, unknown> | undefined): SubagentMeta | undefined {
  const parsed = subagentMetaSchema.safeParse(meta?.subagent);
  return parsed.success ? parsed.data : undefined;
}

const CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";

/**
 * The id of a child's report envelope, the same every time it is computed
 * (a ULID: the child's creation time, then 80 bits of a hash of its name):
 * a runner that takes a crashed child over re-sends the very same envelope,
 * and the parent's dedupe keeps one. No write is needed before the send.
 */
export function reportIdOf(child: string, createdAt: number): string {
  const digest = createHash("sha256").update(`${child}:report`).digest();
  let random = "";
  for (let i = 0; i < 16; i++) random += CROCKFORD[(digest[i] ?? 0) & 31];
  return `${encodeTime(createdAt, 10)}${random}`;
}
