import { DEFAULT_TAG } from "@moniro/envelopes";
import type { DefinitionIssue } from "../agents/agent-definition-error.js";
import type { AgentDefinition } from "../agents/agent-definition-schema.js";
import { closestKey } from "../agents/closest-key.js";
import { renderKickoff } from "./kickoff.js";
import type { SetupStep, WorkflowDefinition } from "./load-workflow.js";
import { INLINE_SEPARATOR, instanceTagSchema } from "./workflow-schema.js";

/** One participant of an instance, as the runtime runs it. */
export interface ResolvedAgent {
  /** The key under `agents:`: the member name others @mention and `team_members` lists. */
  name: string;
  /** The agent that does the work: the ref'd agent itself, or the inline agent's instance name. */
  agent: string;
  kind: "ref" | "inline";
  role?: string;
  /** The effective definition: the agent's file with this workflow's overrides, or the inline entry. */
  definition: AgentDefinition;
  /** `prompt.append` of a ref entry: added to the system prompt while it works in this workspace. */
  promptAppend?: string;
}

/** What one instance `<workflow>:<tag>` runs. */
export interface ResolvedInstance {
  workflow: string;
  tag: string;
  /** `<workflow>:<tag>`: the workspace context and the channel's name. */
  instance: string;
  persistent: boolean;
  agents: ResolvedAgent[];
  setup: readonly SetupStep[];
}

/** An instance cannot be made from this workflow, tag or input; the message says why and what to do. */
export class WorkflowInstanceError extends Error {
  override readonly name = "WorkflowInstanceError";
  constructor(
    readonly code: "bad_tag" | "unresolved" | "unknown_variable" | "missing_variable",
    message: string,
  ) {
    super(message);
  }
}

/**
 * The name an inline agent runs under in one instance:
 * `<workflow>__<tag>__<key>` (INLINE_SEPARATOR). None of the three parts and
 * no defined agent holds `__`, so it names this instance's agent only; it is
 * at most 63 characters, like every agent name.
 */
export function inlineAgentName(workflow: string, tag: string, key: string): string {
  const name = [workflow, tag, key].join(INLINE_SEPARATOR);
  if (name.length > 63) {
    throw new WorkflowInstanceError(
      "bad_tag",
      `inline agent '${key}' of ${workflow}:${tag} would run as '${name}', longer than 63 characters: use a shorter tag (or a shorter workflow or agent name)`,
    );
  }
  return name;
}

/**
 * Refs that name no agent, and inline agents that take a defined agent's
 * name: the problems of one workflow against the project's agents.
 */
export function workflowRefIssues(
  workflow: WorkflowDefinition,
  agents: ReadonlyMap<string, AgentDefinition>,
): DefinitionIssue[] {
  const issues: DefinitionIssue[] = [];
  const known = [...agents.keys()];
  for (const entry of workflow.agents.values()) {
    if (entry.kind === "ref" && !agents.has(entry.ref)) {
      const suggestion = closestKey(entry.ref, known);
      issues.push({
        path: `agents.${entry.key}.ref`,
        message: `no agent '${entry.ref}' is defined${suggestion ? `; did you mean '${suggestion}'?` : ""}: create .agents/${entry.ref}.yaml (or register it in moniro.yaml), or define the agent inline without 'ref'`,
      });
    }
    if (entry.kind === "inline" && agents.has(entry.key)) {
      issues.push({
        path: `agents.${entry.key}`,
        message: `'${entry.key}' is also an agent of .agents/: write '${entry.key}: { ref: ${entry.key} }' to use it, or give the inline agent another name`,
      });
    }
  }
  return issues;
}

/**
 * Resolves a workflow's agents for one instance: refs against the project's
 * agents with the workflow's overrides applied, inline agents under their
 * instance names. Throws a WorkflowInstanceError naming what is wrong.
 */
export function resolveWorkflowInstance(
  workflow: WorkflowDefinition,
  agents: ReadonlyMap<string, AgentDefinition>,
  tag: string = DEFAULT_TAG,
): ResolvedInstance {
  const checked = instanceTagSchema.safeParse(tag);
  if (!checked.success) {
    throw new WorkflowInstanceError("bad_tag", `tag '${tag}' ${checked.error.issues[0]?.message ?? "is not valid"}`);
  }
  const issues = workflowRefIssues(workflow, agents);
  if (issues.length > 0) {
    throw new WorkflowInstanceError(
      "unresolved",
      `workflow '${workflow.name}' (${workflow.file}) cannot start:\n${issues.map((issue) => `  ${issue.path}: ${issue.message}`).join("\n")}`,
    );
  }
  const resolved: ResolvedAgent[] = [];
  for (const entry of workflow.agents.values()) {
    const role = entry.role !== undefined ? { role: entry.role } : {};
    if (entry.kind === "ref") {
      const base = agents.get(entry.ref) as AgentDefinition;
      const overrides = Object.fromEntries(Object.entries(entry.overrides).filter(([, value]) => value !== undefined));
      resolved.push({
        name: entry.key,
        agent: entry.ref,
        kind: "ref",
        ...role,
        definition: { ...base, ...overrides },
        ...(entry.promptAppend !== undefined ? { promptAppend: entry.promptAppend } : {}),
      });
    } else {
      const agent = inlineAgentName(workflow.name, tag, entry.key);
      resolved.push({
        name: entry.key,
        agent,
        kind: "inline",
        ...role,
        definition: { ...entry.fields, name: agent, systemPrompt: entry.systemPrompt, file: workflow.file },
      });
    }
  }
  return {
    workflow: workflow.name,
    tag,
    instance: `${workflow.name}:${tag}`,
    persistent: workflow.workspace.persistent,
    agents: resolved,
    setup: workflow.setup,
  };
}

/**
 * The values a kickoff is filled from: the instance's `workflow` and `tag`,
 * the declared variables (defaults overridden by `given`), and the setup
 * steps' outputs. A given variable the workflow does not declare, or a
 * declared one without default that was not given, is an error.
 */
export function kickoffValues(
  workflow: WorkflowDefinition,
  tag: string,
  given: Readonly<Record<string, string>>,
  setupOutputs: Readonly<Record<string, string>> = {},
): Record<string, string> {
  const declared = Object.keys(workflow.variables);
  for (const name of Object.keys(given)) {
    if (Object.hasOwn(workflow.variables, name)) continue;
    const suggestion = closestKey(name, declared);
    throw new WorkflowInstanceError(
      "unknown_variable",
      `unknown variable '${name}' for workflow '${workflow.name}'${suggestion ? `; did you mean '${suggestion}'?` : ""}: ${declared.length > 0 ? `it declares ${declared.join(", ")}` : "it declares none"} (add it under 'variables:' in ${workflow.file})`,
    );
  }
  const values: Record<string, string> = { workflow: workflow.name, tag };
  for (const [name, fallback] of Object.entries(workflow.variables)) {
    const value = Object.hasOwn(given, name) ? given[name] : fallback;
    if (value === null || value === undefined) {
      throw new WorkflowInstanceError(
        "missing_variable",
        `workflow '${workflow.name}' needs the variable '${name}' (it has no default): give it when starting the instance`,
      );
    }
    values[name] = value;
  }
  for (const [name, output] of Object.entries(setupOutputs)) values[name] = output;
  return values;
}

/** The kickoff of an instance, filled in; undefined when the workflow has none. */
export function instanceKickoff(
  workflow: WorkflowDefinition,
  tag: string,
  given: Readonly<Record<string, string>>,
  setupOutputs: Readonly<Record<string, string>> = {},
): string | undefined {
  if (workflow.kickoff === undefined) return undefined;
  return renderKickoff(workflow.kickoff, kickoffValues(workflow, tag, given, setupOutputs));
}
