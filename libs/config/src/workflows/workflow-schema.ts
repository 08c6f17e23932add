import { CHILD_SEPARATOR, MAX_SETUP_STEPS, nameSchema } from "@moniro/envelopes";
import { z } from "zod";
import { BACKENDS, INLINE_SEPARATOR } from "../agents/agent-definition-schema.js";
import { strictObject } from "../agents/strict-object.js";
import { VARIABLE_NAME } from "./kickoff.js";

export { INLINE_SEPARATOR };

const NO_SEPARATOR = `may not contain '${INLINE_SEPARATOR}': it joins workflow, tag and agent in the names of inline agents; use a single '_'`;
/**
 * `--` names sub-agents (`<parent>--<id>`): an inline agent `code--review__main__helper`
 * would be taken for a child of `code` (its policy, its workspace, its seat).
 */
const NO_CHILD_SEPARATOR = `may not contain '${CHILD_SEPARATOR}': it names sub-agents (<parent>${CHILD_SEPARATOR}<id>), and the instance's inline agents would be taken for another agent's sub-agents; use a single '-'`;

/** A workflow name: a subject token, not `personal` (the personal context), without `__` or `--`. */
export const workflowNameSchema = nameSchema
  .refine((name) => name !== "personal", { message: "'personal' names the personal context: choose another name" })
  .refine((name) => !name.includes(INLINE_SEPARATOR), { message: NO_SEPARATOR })
  .refine((name) => !name.includes(CHILD_SEPARATOR), { message: NO_CHILD_SEPARATOR });

/** An instance tag (`main` when not given): a subject token without `__` or `--`. */
export const instanceTagSchema = nameSchema
  .refine((tag) => !tag.includes(INLINE_SEPARATOR), { message: NO_SEPARATOR })
  .refine((tag) => !tag.includes(CHILD_SEPARATOR), { message: NO_CHILD_SEPARATOR });

const positiveInt = (what: string) => z.number().int(`must be a whole number (${what})`).positive();

/** Where a participant's `role` shows (team_members); free text. */
const roleSchema = z.string().min(1).max(200, "must be at most 200 characters");

/**
 * `alice: { ref: alice }` or `bob: { ref: bob, prompt: { append: … }, max_steps: 40 }`:
 * an agent of `.agents/` taking part in this workflow, with overrides that
 * apply to its work in this workspace. Its prompt, soul and everything else
 * come from its own file.
 */
export const refAgentEntrySchema = strictObject({
  ref: nameSchema,
  role: roleSchema.optional(),
  prompt: strictObject({
    /** Appended to the agent's system prompt while it works in this workspace. */
    append: z.string().min(1, "must not be empty: remove 'prompt' instead"),
  }).optional(),
  model: z.string().min(1, "must name the model, e.g. 'claude-sonnet-4-5'").optional(),
  backend: z.enum(BACKENDS).optional(),
  max_tokens: positiveInt("tokens").optional(),
  max_steps: positiveInt("steps").optional(),
  description: z.string().optional(),
});
export type RefAgentEntry = z.output<typeof refAgentEntrySchema>;

/** The runtime fields a ref entry may override (seed 004 RuntimeOverrides, less `schedule`). */
export const REF_OVERRIDE_KEYS = ["model", "backend", "max_tokens", "max_steps"] as const;

/** One setup step: a shell command run in the workspace before the kickoff; `as` names its output. */
export const setupStepSchema = strictObject({
  shell: z.string().min(1, "must be a shell command, e.g. 'git diff main...HEAD'"),
  as: z
    .string()
    .regex(VARIABLE_NAME, "must be a name of letters, digits and '_' (used as ${{ name }} in the kickoff)")
    .optional(),
});

export const workspaceSchema = strictObject({
  /**
   * false (the default): the channel, documents and files are discarded when
   * the instance stops. true: they are kept, and the next start of the same
   * `<workflow>:<tag>` continues them.
   */
  persistent: z.boolean().default(false),
});

/** `name: default` (a string) or `name: null` (no default: the start must give it). */
export const variablesSchema = z.record(
  z.string().regex(VARIABLE_NAME, "must be a name of letters, digits and '_' (used as ${{ name }} in the kickoff)"),
  z.string().nullable(),
);

/**
 * `.workflows/<name>.yaml` (seed 004 "Workflow Definition"). `agents` is
 * checked entry by entry (agent-entries.ts): an entry with `ref` is a ref
 * agent, one without is defined inline.
 */
export const workflowFileSchema = strictObject({
  name: workflowNameSchema.optional(),
  description: z.string().optional(),
  agents: z.record(z.string(), z.unknown()),
  workspace: workspaceSchema.optional(),
  setup: z
    .array(setupStepSchema)
    .max(MAX_SETUP_STEPS, `must have at most ${MAX_SETUP_STEPS} steps: join commands into one step's shell (a && b)`)
    .optional(),
  variables: variablesSchema.optional(),
  kickoff: z.string().optional(),
});
export type WorkflowFile = z.output<typeof workflowFileSchema>;

export const WORKFLOW_KEYS = ["name", "description", "agents", "workspace", "setup", "variables", "kickoff"] as const;
