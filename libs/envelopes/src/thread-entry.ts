import { z } from "zod";
import { storedAttachmentSchema } from "./attachment.js";
import { contextSchema, laneSchema, storedTagSchema } from "./names.js";

/**
 * One record of an agent's thread (Redis stream `agent:<a>:thread:<ctx>`). The
 * thread is append-only; the window builder turns it into LLM messages.
 */
const entryBase = {
  /** The cycle (one wake → stop) that wrote the entry. */
  cycleId: z.string(),
  ts: z.number().int(),
};

export const inputEntrySchema = z.object({
  ...entryBase,
  kind: z.literal("input"),
  envelopeId: z.string(),
  // Read leniently: entries written before the tag and attachment rules stay readable.
  source: storedTagSchema,
  replyTo: storedTagSchema,
  context: contextSchema,
  lane: laneSchema,
  text: z.string(),
  attachments: z.array(storedAttachmentSchema).default([]),
  /**
   * A batched input (inputs of one injection sharing a `meta.batch` key, seed 003): the envelope ids
   * of the inputs after the first (`envelopeId`) that this one entry carries, in arrival order.
   * `text` holds all their texts. Absent on a single input.
   */
  batched: z.array(z.string()).optional(),
});

export const toolUseSchema = z.object({
  id: z.string(),
  name: z.string(),
  input: z.record(z.string(), z.unknown()),
});
export type ToolUse = z.infer<typeof toolUseSchema>;

export const usageSchema = z.object({
  inputTokens: z.number().int().nonnegative(),
  outputTokens: z.number().int().nonnegative(),
  cacheReadInputTokens: z.number().int().nonnegative().optional(),
  cacheCreationInputTokens: z.number().int().nonnegative().optional(),
});
export type Usage = z.infer<typeof usageSchema>;

export const assistantEntrySchema = z.object({
  ...entryBase,
  kind: z.literal("assistant"),
  step: z.number().int().nonnegative(),
  /** Private monologue: never delivered to anyone. */
  text: z.string(),
  toolUses: z.array(toolUseSchema).default([]),
  stopReason: z.string().nullable(),
  usage: usageSchema.optional(),
  /** Set when the step was aborted (interrupt / cancel) and this is the partial message. */
  aborted: z.boolean().optional(),
});

export const toolResultEntrySchema = z.object({
  ...entryBase,
  kind: z.literal("tool-result"),
  callId: z.string(),
  tool: z.string(),
  content: z.string(),
  isError: z.boolean(),
  /** The runner died or the call was cut short while it ran. */
  interrupted: z.boolean().optional(),
  /** An inbound envelope this result carries (recorded with it as delivered to the thread). */
  delivers: z.string().optional(),
  /**
   * Set on the last result of a step whose calls were all delivered `message`s, one of them with
   * `final: true`: the model ended its turn here, without another LLM call. An input written after
   * it in the same cycle (it arrived meanwhile) reopened the turn. Absent in threads written before.
   */
  endsTurn: z.boolean().optional(),
});

export const skipEntrySchema = z.object({
  ...entryBase,
  kind: z.literal("skip"),
  reason: z.string(),
  /** Entries of this cycle are left out of every later window. */
  skippedCycleId: z.string(),
});

export const compactionEntrySchema = z.object({
  ...entryBase,
  kind: z.literal("compaction"),
  summary: z.string(),
  /** Thread entry id up to which (inclusive) the summary stands for the history. */
  upTo: z.string(),
});

export const instructionEntrySchema = z.object({
  ...entryBase,
  kind: z.literal("instruction"),
  status: z.enum(["incomplete", "failed", "canceled", "interrupted", "preempted"]),
  envelopeIds: z.array(z.string()).default([]),
  detail: z.string(),
  /**
   * Steer mode's set-aside (queue `steer`): the envelope ids of the inputs the agent turned to.
   * The instruction (`envelopeIds`) waits behind them and is resumed once they are answered,
   * even when the runner stops while answering them (it is never acked without being resumed).
   */
  steeredTo: z.array(z.string()).optional(),
});

export const threadEntrySchema = z.discriminatedUnion("kind", [
  inputEntrySchema,
  assistantEntrySchema,
  toolResultEntrySchema,
  skipEntrySchema,
  compactionEntrySchema,
  instructionEntrySchema,
]);
export type ThreadEntryData = z.output<typeof threadEntrySchema>;
export type ThreadEntryInput = z.input<typeof threadEntrySchema>;
export type InputEntry = z.output<typeof inputEntrySchema>;
export type AssistantEntry = z.output<typeof assistantEntrySchema>;
export type ToolResultEntry = z.output<typeof toolResultEntrySchema>;
/** A stored entry: its data plus the stream id Redis gave it. */
export type ThreadEntry = ThreadEntryData & { entryId: string };

/** The envelope ids an input entry carries: its own, then those batched into it. */
export function inputEnvelopeIds(entry: Pick<InputEntry, "envelopeId" | "batched">): string[] {
  return entry.batched === undefined ? [entry.envelopeId] : [entry.envelopeId, ...entry.batched];
}

/**
 * The inbound envelopes an entry delivers to its thread: an input's (all of
 * a batched input's), or the one a tool result carries (`delivers`). The
 * thread keeps these ids, so an envelope is written to it at most once.
 */
export function deliveredEnvelopeIds(entry: ThreadEntryData): string[] {
  if (entry.kind === "input") return inputEnvelopeIds(entry);
  if (entry.kind === "tool-result" && entry.delivers) return [entry.delivers];
  return [];
}

/** Adds `deliveredEnvelopeIds(entry)` to `ids` without building the list (a whole window is read this way per run). */
export function addDeliveredEnvelopeIds(ids: Set<string>, entry: ThreadEntryData): void {
  if (entry.kind === "input") {
    ids.add(entry.envelopeId);
    if (entry.batched !== undefined) for (const id of entry.batched) ids.add(id);
  } else if (entry.kind === "tool-result" && entry.delivers) ids.add(entry.delivers);
}
