import type { DefinitionIssue } from "../agents/agent-definition-error.js";
import {
  AGENT_DEFINITION_KEYS,
  type AgentDefinitionFields,
  agentDefinitionSchema,
} from "../agents/agent-definition-schema.js";
import { definitionIssues } from "../agents/format-issues.js";
import { INLINE_SEPARATOR, REF_OVERRIDE_KEYS, type RefAgentEntry, refAgentEntrySchema } from "./workflow-schema.js";

/** An agent of `.agents/` taking part, with this workflow's overrides. */
export interface RefEntry {
  kind: "ref";
  /** The key under `agents:`, equal to `ref`: the name the others @mention. */
  key: string;
  ref: string;
  role?: string;
  /** `prompt.append`: added to the agent's system prompt while it works in this workspace. */
  promptAppend?: string;
  overrides: Partial<Pick<RefAgentEntry, (typeof REF_OVERRIDE_KEYS)[number]>>;
}

/** An agent that lives only while its instance runs, defined here. */
export interface InlineEntry {
  kind: "inline";
  /** The key under `agents:`: the name the others @mention. */
  key: string;
  role?: string;
  /** The entry's fields as an agent definition's (its `name` is the key until resolved per instance). */
  fields: AgentDefinitionFields;
  /** `prompt.system`, or the text of `prompt.system_file` (read when the workflow loads). */
  systemPrompt: string;
}

export type AgentEntry = RefEntry | InlineEntry;

type Raw = Record<string, unknown>;

function isMapping(value: unknown): value is Raw {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Takes `key` out of `raw` (a copy), returning whether it was there. */
function take(raw: Raw, key: string): boolean {
  if (!(key in raw)) return false;
  delete raw[key];
  return true;
}

function refIssues(raw: Raw, ref: string): DefinitionIssue[] {
  const issues: DefinitionIssue[] = [];
  const file = `.agents/${ref}.yaml`;
  const own = (what: string) => `${what} comes from ${file}: `;
  if (take(raw, "soul")) {
    issues.push({
      path: "soul",
      message: `a ref agent cannot define 'soul': ${own("its soul")}remove it here, or drop 'ref' to define the agent inline`,
    });
  }
  if (isMapping(raw.prompt)) {
    const prompt = { ...raw.prompt };
    for (const key of ["system", "system_file"]) {
      if (take(prompt, key)) {
        issues.push({
          path: `prompt.${key}`,
          message: `a ref agent cannot set '${key}': ${own("its system prompt")}use 'prompt.append' to add to it here, or drop 'ref' to define the agent inline`,
        });
      }
    }
    // `prompt: { system: … }` alone: its problem is reported above, not a missing `append` too.
    if (Object.keys(prompt).length > 0) raw.prompt = prompt;
    else delete raw.prompt;
  }
  for (const key of ["schedule", "webhooks"]) {
    if (take(raw, key)) {
      issues.push({
        path: key,
        message: `${key} belong to the agent's own file (${file}), not to a workflow: remove it here`,
      });
    }
  }
  for (const key of AGENT_DEFINITION_KEYS) {
    if (key in refAgentEntrySchemaKeys || !take(raw, key)) continue;
    issues.push({
      path: key,
      message: `'${key}' cannot be overridden in a workflow: set it in ${file} (a workflow may set ${REF_OVERRIDE_KEYS.join(", ")}, role and prompt.append)`,
    });
  }
  return issues;
}

const refAgentEntrySchemaKeys: Record<string, true> = Object.fromEntries(
  ["ref", "role", "prompt", "description", ...REF_OVERRIDE_KEYS].map((key) => [key, true]),
);

function inlineIssues(raw: Raw): DefinitionIssue[] {
  const issues: DefinitionIssue[] = [];
  if (take(raw, "name")) {
    issues.push({ path: "name", message: "an inline agent is named by its key under 'agents': remove 'name'" });
  }
  if (isMapping(raw.prompt) && "append" in raw.prompt) {
    const { append: _append, ...prompt } = raw.prompt;
    raw.prompt = prompt;
    issues.push({
      path: "prompt.append",
      message:
        "'append' extends the prompt of a ref agent: an inline agent sets 'prompt.system' or 'prompt.system_file' (or add 'ref: <agent>' to use an agent of .agents/)",
    });
  }
  for (const key of ["schedule", "webhooks"]) {
    if (take(raw, key)) {
      issues.push({
        path: key,
        message: `an inline agent lives only while its instance runs and takes no ${key}: define the agent in .agents/ and use 'ref'`,
      });
    }
  }
  return issues;
}

const INLINE_MODEL_MISSING =
  "is required for an inline agent: add 'model: <model id>', or add 'ref: <agent>' to use an agent of .agents/";

/**
 * One `agents:` entry → a ref or an inline entry, or the problems with it
 * (paths relative to the entry). Discriminated by the presence of `ref`
 * (seed 004 "Agent Reference Types"); `readSystemFile` reads an inline
 * agent's `prompt.system_file` relative to the workflow file.
 */
export async function parseAgentEntry(
  key: string,
  value: unknown,
  readSystemFile: (prompt: { system?: string; system_file?: string } | undefined) => Promise<string>,
): Promise<{ entry: AgentEntry } | { issues: DefinitionIssue[] }> {
  if (!isMapping(value)) {
    return {
      issues: [
        {
          path: "(entry)",
          message: `must be a mapping: '{ ref: ${key} }' for an agent of .agents/, or '{ model: …, prompt: { system: … } }' for an inline one`,
        },
      ],
    };
  }
  const raw: Raw = { ...value };
  if ("ref" in raw) {
    const ref = typeof raw.ref === "string" ? raw.ref : key;
    const issues = refIssues(raw, ref);
    const parsed = refAgentEntrySchema.safeParse(raw);
    if (!parsed.success) issues.push(...definitionIssues(parsed.error, key, raw));
    if (parsed.success && parsed.data.ref !== key) {
      issues.push({
        path: "ref",
        message: `a ref agent takes part under its own name: write '${parsed.data.ref}: { ref: ${parsed.data.ref} }' (the key '${key}' must equal 'ref')`,
      });
    }
    if (issues.length > 0 || !parsed.success) return { issues };
    const { ref: name, role, prompt, description: _description, ...overrides } = parsed.data;
    return {
      entry: {
        kind: "ref",
        key,
        ref: name,
        ...(role !== undefined ? { role } : {}),
        ...(prompt?.append !== undefined ? { promptAppend: prompt.append } : {}),
        overrides,
      },
    };
  }
  const issues = inlineIssues(raw);
  let role: string | undefined;
  if ("role" in raw) {
    if (typeof raw.role === "string" && raw.role.length > 0 && raw.role.length <= 200) role = raw.role;
    else issues.push({ path: "role", message: "must be a string of 1-200 characters (shown by team_members)" });
    delete raw.role;
  }
  if (key.includes(INLINE_SEPARATOR)) {
    issues.push({
      path: "(entry)",
      message: `the name '${key}' may not contain '${INLINE_SEPARATOR}' (it joins workflow, tag and agent in inline agents' names): use a single '_'`,
    });
  }
  const parsed = agentDefinitionSchema.safeParse({ ...raw, name: key });
  if (!parsed.success) {
    for (const issue of definitionIssues(parsed.error, key, { ...raw, name: key })) {
      if (issue.path === "name") issues.push({ path: "(entry)", message: `the name '${key}' ${issue.message}` });
      else if (issue.path === "model" && !("model" in raw))
        issues.push({ path: "model", message: INLINE_MODEL_MISSING });
      else issues.push(issue);
    }
  }
  if (issues.length > 0 || !parsed.success) return { issues };
  try {
    const systemPrompt = await readSystemFile(parsed.data.prompt);
    return {
      entry: { kind: "inline", key, ...(role !== undefined ? { role } : {}), fields: parsed.data, systemPrompt },
    };
  } catch (error) {
    return { issues: [{ path: "prompt.system_file", message: (error as Error).message }] };
  }
}
