import { z } from "zod";
import { nameSchema, storedTagSchema } from "./names.js";

/**
 * Records of a workspace (one workflow instance `<workflow>:<tag>`), as the
 * store keeps them in Redis and as tools and the gateway hand them on.
 */

/** A channel entry's id: the Redis stream id (`<ms>-<seq>`); also the cursor of `channel_read`. */
export const CHANNEL_CURSOR_PATTERN = /^\d{1,20}-\d{1,20}$/;

/** The largest part of a Redis stream id (an unsigned 64-bit number); Redis refuses a larger one. */
export const STREAM_ID_PART_MAX = "18446744073709551615";

/** Whether a cursor's two numbers fit a stream id (a cursor that does not match the pattern is not judged here). */
function cursorPartsFit(cursor: string): boolean {
  return (
    !CHANNEL_CURSOR_PATTERN.test(cursor) ||
    cursor.split("-").every((part) => BigInt(part) <= BigInt(STREAM_ID_PART_MAX))
  );
}

/** Whether `cursor` is a channel entry id Redis takes: `<ms>-<seq>`, each at most STREAM_ID_PART_MAX. */
export function isChannelCursor(cursor: string): boolean {
  return CHANNEL_CURSOR_PATTERN.test(cursor) && cursorPartsFit(cursor);
}

export const channelCursorSchema = z
  .string()
  .regex(CHANNEL_CURSOR_PATTERN, "must be a channel entry id such as '1732612345678-0' (from a previous read)")
  .refine(cursorPartsFit, {
    message: `must be a channel entry id such as '1732612345678-0' (from a previous read): each of its two numbers is at most ${STREAM_ID_PART_MAX}`,
  });

/** Who posted: a member's name, or a tag from outside (`http:<user>`, `workflow:<name>` for the kickoff). */
export const posterSchema = z.union([nameSchema, storedTagSchema]);

/** One post of a workspace channel (stream field `e`). */
export const channelPostSchema = z.object({
  from: posterSchema,
  text: z.string(),
  /** The members the post @mentioned and notified (the sender excluded), in order. */
  mentions: z.array(nameSchema),
  /** When it was posted (epoch ms). */
  at: z.number().int().nonnegative(),
});
export type ChannelPost = z.infer<typeof channelPostSchema>;
/** A post with its id (the stream entry id). */
export type ChannelEntry = ChannelPost & { id: string };

/** A participant of an instance, under its member name (what others @mention). */
export const workspaceMemberSchema = z.object({
  /** The agent doing the work: a ref'd agent, or an inline agent's instance name. */
  agent: nameSchema,
  kind: z.enum(["ref", "inline"]),
  role: z.string().max(200).optional(),
  /** The workflow entry's `prompt.append`: added to the agent's system prompt when it works in this workspace. */
  promptAppend: z.string().max(20_000).optional(),
});
export type WorkspaceMember = z.infer<typeof workspaceMemberSchema>;

export const WORKSPACE_STATUSES = ["running", "stopped"] as const;
export type WorkspaceStatus = (typeof WORKSPACE_STATUSES)[number];

/** A shared document's name: a file-like name, no path. */
export const DOCUMENT_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;
export const documentNameSchema = z
  .string()
  .regex(
    DOCUMENT_NAME_PATTERN,
    "must be 1-128 characters of letters, digits, '.', '_' or '-', starting with a letter or digit (e.g. 'plan.md')",
  );

/** What the store keeps beside a document's text. */
export const documentMetaSchema = z.object({
  /** 1 for a new document, +1 per write: `ifVersion` on a write refuses a stale one. */
  version: z.number().int().positive(),
  /** UTF-8 bytes of the text. */
  bytes: z.number().int().nonnegative(),
  updatedBy: posterSchema,
  updatedAt: z.number().int().nonnegative(),
});
export type DocumentMeta = z.infer<typeof documentMetaSchema>;

/** A proposal as created; it never changes (its status and votes are kept beside it). */
export const proposalSchema = z.object({
  /** `p<n>`, numbered per instance. */
  id: z.string().regex(/^p\d+$/),
  title: z.string(),
  options: z.array(z.string()).min(2),
  createdBy: posterSchema,
  createdAt: z.number().int().nonnegative(),
  /** The members when it was created: each has one vote. */
  voters: z.array(nameSchema),
});
export type Proposal = z.infer<typeof proposalSchema>;

export const proposalStatusSchema = z.union([
  z.object({ status: z.literal("open") }),
  z.object({ status: z.literal("decided"), result: z.string(), closedAt: z.number().int().nonnegative() }),
  z.object({ status: z.literal("tied"), closedAt: z.number().int().nonnegative() }),
]);
export type ProposalStatus = z.infer<typeof proposalStatusSchema>;
