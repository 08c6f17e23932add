import { z } from "zod";

/** How inputs that arrive while the agent works reach it (DESIGN §5 "Queue modes"). */
export const QUEUE_MODES = ["inject", "steer", "followup", "collect", "interrupt"] as const;
export type QueueMode = (typeof QUEUE_MODES)[number];

const toolSpecSchema = z.object({
  name: z.string().min(1),
  description: z.string(),
  inputSchema: z.record(z.string(), z.unknown()),
});

export const contextPolicySchema = z.discriminatedUnion("type", [
  z.object({
    type: z.literal("compaction"),
    /** Summarise once the provider reports more input tokens than this for one call. */
    thresholdTokens: z.number().int().positive().default(100_000),
    /** Turns (a user input and everything the agent did about it) kept verbatim after the summary. */
    keepRecentTurns: z.number().int().min(1).default(4),
  }),
  z.object({
    type: z.literal("thin_thread"),
    /** Only the last N turns are sent; older ones stay reachable with history_search / history_read. */
    turns: z.number().int().min(1).default(8),
  }),
]);
export type ContextPolicy = z.output<typeof contextPolicySchema>;

/**
 * The loop's own settings. The runtime maps the agent YAML (DESIGN §6) onto
 * this, with the tool specs of the agent's profile; defaults are DESIGN §5's.
 */
export const loopSettingsSchema = z.object({
  model: z.string().min(1),
  maxTokens: z.number().int().positive().default(4096),
  /** The agent's base prompt (prompt.system or the text of prompt.system_file). */
  systemPrompt: z.string().default(""),
  /** Who the agent is (seed 004): free text and/or role, expertise, style, principles. */
  soul: z
    .object({
      text: z.string().optional(),
      role: z.string().optional(),
      expertise: z.array(z.string()).optional(),
      style: z.string().optional(),
      principles: z.array(z.string()).optional(),
    })
    .optional(),
  /** The `prompt.append` of the workflow entry the agent runs under ('' outside a workflow). */
  workflowAppend: z.string().default(""),
  /** The share of the system prompt for memory, active todos and recent notes. */
  personal: z
    .object({
      /** Estimated tokens (chars / 4) for the three sections together; the rest stays reachable by the tools. */
      maxTokens: z.number().int().nonnegative().default(1200),
      /** Newest notes read for the prompt (0: none). */
      recentNotes: z.number().int().nonnegative().default(5),
    })
    .default({ maxTokens: 1200, recentNotes: 5 }),
  /** The share of a workspace cycle's system prompt for its workspace (channel, @mentions, documents). */
  workspace: z
    .object({
      /** Estimated tokens (chars / 4) for the workspace sections; the rest stays reachable by the team tools. */
      maxTokens: z.number().int().nonnegative().default(1500),
      /** Newest unseen channel posts read for the prompt. */
      channel: z.number().int().positive().max(200).default(20),
      /** Oldest unread @mentions read for the prompt. */
      mentions: z.number().int().positive().max(200).default(10),
      /** Shared documents listed. */
      documents: z.number().int().positive().max(200).default(30),
    })
    .default({ maxTokens: 1500, channel: 20, mentions: 10, documents: 30 }),
  /** Tool schemas sent on every call, including `message` and `skip`. */
  tools: z.array(toolSpecSchema).default([]),
  /** Names among `tools` offered only in cycles that work in a workspace (the team tools). */
  workspaceTools: z.array(z.string()).default([]),
  maxSteps: z.number().int().positive().default(50),
  queue: z.enum(QUEUE_MODES).default("inject"),
  /** `unified`: one thread for every source; `per-context`: personal + one per workspace. */
  threads: z.enum(["unified", "per-context"]).default("unified"),
  context: contextPolicySchema.default({ type: "compaction", thresholdTokens: 100_000, keepRecentTurns: 4 }),
  aging: z
    .object({
      /** Preempted this many times → background work is promoted to the normal lane. */
      preemptionsToPromote: z.number().int().positive().default(3),
      /** Queued longer than this → treated as immediate. */
      queuedMsToImmediate: z.number().int().positive().default(300_000),
    })
    .default({ preemptionsToPromote: 3, queuedMsToImmediate: 300_000 }),
  retry: z
    .object({
      baseMs: z.number().int().positive().default(2000),
      /** Total LLM attempts for one step, the first included: 9 = the first and up to 8 retries (DESIGN §5). */
      maxAttempts: z.number().int().positive().default(9),
      /** ± fraction applied to each backoff delay. */
      jitter: z.number().min(0).max(1).default(0.2),
    })
    .default({ baseMs: 2000, maxAttempts: 9, jitter: 0.2 }),
  restart: z
    .object({
      minMs: z.number().int().positive().default(1000),
      maxMs: z.number().int().positive().default(30_000),
      maxRestarts: z.number().int().nonnegative().default(5),
    })
    .default({ minMs: 1000, maxMs: 30_000, maxRestarts: 5 }),
  /** Each tool call must finish within this long (the executor gets now + this as its deadline). */
  toolDeadlineMs: z.number().int().positive().default(120_000),
});
export type LoopSettings = z.output<typeof loopSettingsSchema>;
export type LoopSettingsInput = z.input<typeof loopSettingsSchema>;

/** Validates and fills defaults; throws a ZodError naming the field on bad input. */
export function loopSettings(input: LoopSettingsInput): LoopSettings {
  return loopSettingsSchema.parse(input);
}
