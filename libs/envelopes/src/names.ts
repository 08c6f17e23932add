import { z } from "zod";

/**
 * Agent, workflow, tag and channel names become NATS subject tokens and Redis
 * key parts, so they are validated where they enter: no dots, spaces or
 * wildcards can ever reach a subject.
 */
export const NAME_PATTERN = /^[a-z0-9][a-z0-9_-]{0,62}$/;

export const nameSchema = z
  .string()
  .regex(
    NAME_PATTERN,
    "must be 1-63 characters of a-z, 0-9, '_' or '-', starting with a letter or digit (it becomes a NATS subject token)",
  );
export type Name = z.infer<typeof nameSchema>;

/** A tool name is a subject token too (moniro.tool.<name>). */
export const toolNameSchema = z
  .string()
  .regex(/^[a-z][a-z0-9_]{0,62}$/, "must be snake_case: a-z, 0-9 and '_', starting with a letter");

/**
 * A source / reply tag: `<kind>:<rest>`, e.g. `signal:+15551234567`,
 * `signal:group:<id>`, `webhook:<name>`, `cron:<job>`, `http:<user>`,
 * `ws:<workflow>:<tag>`, `agent:<name>`. The kind selects the outbound channel.
 * The agent reads a tag as `[<tag>] <text>`, so its address holds no space,
 * line break, control or format character and no '[' or ']': no tag can end
 * its brackets early and pose as another.
 */
export const TAG_PATTERN = /^([a-z][a-z0-9_-]{0,31}):([^\s[\]\p{Cc}\p{Cf}\p{Cs}]{1,256})$/u;
export const tagSchema = z
  .string()
  .regex(
    TAG_PATTERN,
    "must look like '<channel>:<address>' (e.g. 'http:alice', 'signal:+15551234567'): a lower-case channel, then 1-256 characters without spaces, '[', ']' or control characters",
  );
export type Tag = z.infer<typeof tagSchema>;

/**
 * Tags as threads stored them before the address rules above: history stays
 * readable, and new entries come only from envelopes checked by `tagSchema`.
 */
export const storedTagSchema = z
  .string()
  .regex(/^[a-z][a-z0-9_-]{0,31}:\S{1,256}$/, "must look like '<channel>:<address>'");

/**
 * The `<user>` of an `http:<user>` tag (the gateway's `from`): letters,
 * digits and `. _ @ + -`, so an e-mail address or a user id fits and nothing
 * that reads as markup does.
 */
export const HTTP_USER_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._@+-]{0,127}$/;
export const httpUserSchema = z
  .string({ error: "must be a string: who is writing (the agent sees and answers 'http:<from>')" })
  .regex(
    HTTP_USER_PATTERN,
    "must be 1-128 characters of A-Z, a-z, 0-9, '.', '_', '@', '+' or '-', starting with a letter or digit (the agent sees and answers 'http:<from>')",
  );

/** The channel of a tag is its first token: `signal:+1555…` → `signal`. */
export function channelOf(tag: string): string {
  const index = tag.indexOf(":");
  return index < 0 ? tag : tag.slice(0, index);
}

/**
 * `personal`, or `<workflow>:<tag>` for a workspace context, both tokens
 * names (NAME_PATTERN). `personal` is not a workflow name: `personal:<x>`
 * would read as a part of the personal context, so it is refused.
 */
export const CONTEXT_RULE =
  "must be 'personal' or '<workflow>:<tag>', where workflow and tag are each 1-63 characters of a-z, 0-9, '_' or '-' starting with a letter or digit, and the workflow is not 'personal'";
export const contextSchema = z
  .string()
  .regex(/^(personal|[a-z0-9][a-z0-9_-]{0,62}:[a-z0-9][a-z0-9_-]{0,62})$/, CONTEXT_RULE)
  .refine((context) => !context.startsWith("personal:"), CONTEXT_RULE);

export const LANES = ["immediate", "normal", "background"] as const;
export const laneSchema = z.enum(LANES);
export type Lane = z.infer<typeof laneSchema>;
