import { CHILD_SEPARATOR, MAX_SCHEDULE_MS, nameSchema, tagSchema } from "@moniro/envelopes";
import { z } from "zod";
import { cronProblem, timeZoneProblem } from "./cron-check.js";
import { strictObject, withShorthand } from "./strict-object.js";
import { agentToolPolicySchema } from "./tool-policy.js";
import { webhooksSchema } from "./webhook-schema.js";

/** The LLM backends an agent can run on; `mock` runs in process (demo, tests without an API key). */
export const BACKENDS = ["anthropic", "mock"] as const;
/** DESIGN §5 queue modes: how inputs that arrive while the agent works reach it. */
export const QUEUE_MODES = ["inject", "steer", "followup", "collect", "interrupt"] as const;
export const THREAD_MODES = ["unified", "per-context"] as const;
export const CONTEXT_TYPES = ["compaction", "thin_thread"] as const;

/**
 * Joins workflow, tag and key into an inline agent's runtime name
 * (`review__pr-1__helper`, docs/workflows.md). No agent name, workflow name,
 * tag or key holds it, so such a name is unambiguous and no defined agent
 * can take it.
 */
export const INLINE_SEPARATOR = "__";

const positiveInt = (what: string) => z.number().int(`must be a whole number (${what})`);

const promptSchema = strictObject({
  /** The base system prompt, inline. */
  system: z.string().optional(),
  /** A file holding the base system prompt, relative to the YAML file. */
  system_file: z.string().min(1, "must name a file, relative to the YAML file").optional(),
}).superRefine((prompt, ctx) => {
  if (prompt.system !== undefined && prompt.system_file !== undefined) {
    ctx.addIssue({ code: "custom", message: "set either 'system' or 'system_file', not both" });
  }
});

const wordList = (what: string) =>
  z.array(z.string().min(1, "must not be empty"), `must be a list of ${what}, e.g. [typescript, testing]`);

/**
 * Who the agent is (seed 004 "Soul"), injected after the base prompt. Free
 * text (`soul: curious and careful`) is short for `soul: { text: ... }`;
 * the structured form names `role`, `expertise`, `style` and `principles`.
 */
const soulSchema = z.preprocess(
  (value) => (typeof value === "string" ? { text: value } : value),
  strictObject({
    /** Free text, as in `soul: <text>`. */
    text: z.string().optional(),
    role: z.string().optional(),
    expertise: wordList("areas").optional(),
    style: z.string().optional(),
    principles: wordList("principles").optional(),
  }),
);

/**
 * Auto-memory (seed 004 "Auto-Memory Extraction"): after each completed
 * instruction a fast model reads the cycle and writes decisions, patterns and
 * task outcomes into the agent's memory; a trivial exchange writes nothing.
 */
const autoMemorySchema = strictObject({
  /** Default true: the block alone turns it on; `enabled: false` keeps the block but turns it off. */
  enabled: z.boolean().default(true),
  /** The extraction model (a fast one, e.g. 'claude-haiku-4-5'); the agent's own model when absent. */
  model: z.string().min(1, "must name the model, e.g. 'claude-haiku-4-5'").optional(),
  /** At most this many memories per instruction. */
  max_entries: positiveInt("memories").min(1).max(20).optional(),
});

/** `context: thin_thread` is short for `context: { type: thin_thread }`. */
const contextSchema = withShorthand(
  "type",
  strictObject({
    type: z.enum(CONTEXT_TYPES).default("compaction"),
    /** Same as the top-level `threads`; either place works. */
    threads: z.enum(THREAD_MODES).optional(),
    /** compaction: summarise once one LLM call's input passes this many tokens. */
    threshold_tokens: positiveInt("tokens").positive().optional(),
    /** compaction: turns kept verbatim after the summary. */
    keep_recent_turns: positiveInt("turns").min(1).optional(),
    /** thin_thread: only the last N turns are sent. */
    turns: positiveInt("turns").min(1).optional(),
    /** Estimated tokens of the system prompt for memory, active todos and recent notes together (default 1200). */
    personal_tokens: positiveInt("tokens").nonnegative().optional(),
    /** How many of the newest notes the prompt shows (default 5; 0: none). */
    recent_notes: positiveInt("notes").nonnegative().optional(),
  }),
);

const queueSchema = withShorthand("mode", strictObject({ mode: z.enum(QUEUE_MODES) }));

const retrySchema = strictObject({
  /** First backoff delay of a transient LLM error; doubles each attempt. */
  base_ms: positiveInt("milliseconds").positive().optional(),
  /** Total LLM attempts for one step, the first included. */
  max_attempts: positiveInt("attempts").positive().optional(),
  /** ± fraction applied to each delay (0..1). */
  jitter: z.number().min(0).max(1).optional(),
});

const restartSchema = strictObject({
  min_ms: positiveInt("milliseconds").positive().optional(),
  max_ms: positiveInt("milliseconds").positive().optional(),
  max_restarts: positiveInt("restarts").nonnegative().optional(),
});

const agingSchema = strictObject({
  /** Preempted this many times → promoted to the normal lane. */
  preemptions_to_promote: positiveInt("preemptions").positive().optional(),
  /** Queued longer than this → treated as immediate. */
  queued_ms_to_immediate: positiveInt("milliseconds").positive().optional(),
});

/**
 * `schedule: '0 9 * * *'` is short for `schedule: { cron: '0 9 * * *' }`: a
 * wakeup the scheduler fires; `heartbeat_ms` asks for the idle heartbeat.
 * The scheduler turns this block into BullMQ jobs and keeps them in step
 * with the file.
 */
const scheduleSchema = withShorthand(
  "cron",
  strictObject({
    cron: z.string().min(1).max(120).optional(),
    every_ms: positiveInt("milliseconds")
      .min(1000, "must be at least 1000 (one second)")
      .max(MAX_SCHEDULE_MS, `must be at most 10 years (${MAX_SCHEDULE_MS} ms)`)
      .optional(),
    tz: z.string().max(64).optional(),
    /** What the agent sees when the wakeup fires: `[cron:wakeup] <reason>`. */
    reason: z.string().min(1).max(2000).optional(),
    /**
     * Where the wakeup lands: `<workflow>:<tag>` (that instance) or `<workflow>` (every running
     * instance of it), when the instance runs with the agent as a member; otherwise, and when
     * absent, the personal context.
     */
    workspace: z
      .string()
      .regex(
        /^[a-z0-9][a-z0-9_-]{0,62}(:[a-z0-9][a-z0-9_-]{0,62})?$/,
        "must be '<workflow>' (every running instance of it) or '<workflow>:<tag>' (e.g. 'review:pr-123'), names of a-z, 0-9, '_' or '-'; leave it out for the personal context",
      )
      .refine(
        (value) => value !== "personal" && !value.startsWith("personal:"),
        "'personal' is the personal context, not a workflow: leave 'workspace' out for it",
      )
      .optional(),
    heartbeat_ms: positiveInt("milliseconds")
      .min(1000, "must be at least 1000 (one second)")
      .max(MAX_SCHEDULE_MS, `must be at most 10 years (${MAX_SCHEDULE_MS} ms)`)
      .optional(),
    /** Where the agent answers `HEARTBEAT_OK` (the heartbeat's reply target); `http:heartbeat` when absent. */
    heartbeat_to: tagSchema.optional(),
  }).superRefine((schedule, ctx) => {
    if (schedule.cron !== undefined && schedule.every_ms !== undefined) {
      ctx.addIssue({ code: "custom", message: "set either 'cron' or 'every_ms', not both" });
    }
    const wakeup = schedule.cron !== undefined || schedule.every_ms !== undefined;
    for (const key of ["reason", "workspace"] as const) {
      if (schedule[key] !== undefined && !wakeup) {
        ctx.addIssue({
          code: "custom",
          path: [key],
          message: `'${key}' belongs to a wakeup: add 'cron' or 'every_ms'`,
        });
      }
    }
    if (schedule.tz !== undefined && schedule.cron === undefined) {
      ctx.addIssue({ code: "custom", path: ["tz"], message: "'tz' applies to 'cron' only" });
    }
    // Checked here, not only by the scheduler (which could only log it): a bad pattern is refused where it is written.
    const badCron = schedule.cron === undefined ? undefined : cronProblem(schedule.cron);
    if (badCron) ctx.addIssue({ code: "custom", path: ["cron"], message: badCron });
    const badZone = schedule.tz === undefined ? undefined : timeZoneProblem(schedule.tz);
    if (badZone) ctx.addIssue({ code: "custom", path: ["tz"], message: badZone });
    if (schedule.heartbeat_to !== undefined && schedule.heartbeat_ms === undefined) {
      ctx.addIssue({ code: "custom", path: ["heartbeat_to"], message: "'heartbeat_to' needs 'heartbeat_ms'" });
    }
  }),
);

/**
 * `.agents/<name>.yaml` (DESIGN §6). Field names are the YAML's (snake_case).
 * Every key is known: a typo is an error that names the closest known key.
 */
export const agentDefinitionSchema = strictObject({
  // `--` is reserved for sub-agents (`<parent>--<id>`), so no defined agent can take a child's name.
  name: nameSchema
    .refine((name) => !name.includes(CHILD_SEPARATOR), {
      message: `may not contain '${CHILD_SEPARATOR}': names with it are reserved for sub-agents (<parent>${CHILD_SEPARATOR}<id>); use a single '-'`,
    })
    .refine((name) => !name.includes(INLINE_SEPARATOR), {
      message: `may not contain '${INLINE_SEPARATOR}': names with it are reserved for the inline agents of workflow instances (<workflow>${INLINE_SEPARATOR}<tag>${INLINE_SEPARATOR}<agent>); use a single '_'`,
    }),
  model: z.string().min(1, "must name the model, e.g. 'claude-sonnet-4-5'"),
  backend: z.enum(BACKENDS).default("anthropic"),
  prompt: promptSchema.optional(),
  soul: soulSchema.optional(),
  auto_memory: autoMemorySchema.optional(),
  context: contextSchema.optional(),
  threads: z.enum(THREAD_MODES).optional(),
  max_tokens: positiveInt("tokens").positive().optional(),
  max_steps: positiveInt("steps").positive().optional(),
  queue: queueSchema.optional(),
  retry: retrySchema.optional(),
  restart: restartSchema.optional(),
  aging: agingSchema.optional(),
  tool_deadline_ms: positiveInt("milliseconds").positive().optional(),
  schedule: scheduleSchema.optional(),
  tools: agentToolPolicySchema.optional(),
  /** Hooks that deliver to this agent (`POST /v1/hooks/<name>`, docs/webhooks.md); the gateway reads them. */
  webhooks: webhooksSchema.optional(),
  /** Free text for people reading the file; the runtime ignores it. */
  description: z.string().optional(),
});
export type AgentDefinitionFields = z.output<typeof agentDefinitionSchema>;
export type AgentDefinitionInput = z.input<typeof agentDefinitionSchema>;

/** A loaded definition: the YAML's fields, the composed system prompt, and where it came from. */
export type AgentDefinition = AgentDefinitionFields & {
  /** `prompt.system`, or the text of `prompt.system_file` ('' when neither is set). */
  systemPrompt: string;
  /** Absolute path of the YAML file. */
  file: string;
};

/** Top-level keys, for "did you mean" suggestions and docs. */
export const AGENT_DEFINITION_KEYS = [
  "name",
  "model",
  "backend",
  "prompt",
  "soul",
  "auto_memory",
  "context",
  "threads",
  "max_tokens",
  "max_steps",
  "queue",
  "retry",
  "restart",
  "aging",
  "tool_deadline_ms",
  "schedule",
  "tools",
  "webhooks",
  "description",
] as const;
