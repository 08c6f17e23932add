import { readdir, readFile, stat } from "node:fs/promises";
import { basename, extname, join, resolve } from "node:path";
import { parseMentions } from "@moniro/envelopes";
import type { z } from "zod";
import { AgentDefinitionError, type DefinitionIssue } from "../agents/agent-definition-error.js";
import { closestKey } from "../agents/closest-key.js";
import { definitionIssues } from "../agents/format-issues.js";
import { parseYaml, systemPromptOf } from "../agents/load-agent-definitions.js";
import { type AgentEntry, parseAgentEntry } from "./agent-entries.js";
import { KickoffSyntaxError, kickoffVariables } from "./kickoff.js";
import { WorkflowDefinitionError } from "./workflow-definition-error.js";
import {
  type setupStepSchema,
  workflowFileSchema,
  workflowNameSchema,
  type workspaceSchema,
} from "./workflow-schema.js";

/** Names every kickoff can use without declaring them: the instance's workflow and tag. */
export const BUILTIN_VARIABLES = ["workflow", "tag"] as const;

export type SetupStep = z.output<typeof setupStepSchema>;

/** A loaded, valid `.workflows/<name>.yaml`. */
export interface WorkflowDefinition {
  name: string;
  /** Absolute path of the YAML file. */
  file: string;
  description?: string;
  /** In file order; keys are the names members @mention. */
  agents: ReadonlyMap<string, AgentEntry>;
  workspace: z.output<typeof workspaceSchema>;
  setup: readonly SetupStep[];
  /** Declared variables: default value, or null when the start must give one. */
  variables: Readonly<Record<string, string | null>>;
  kickoff?: string;
}

const EXTENSIONS = [".yaml", ".yml"];

function fail(file: string, path: string, message: string): never {
  throw new WorkflowDefinitionError(file, [{ path, message }]);
}

/** Reads YAML, turning the agents loader's error into this file's. */
function yamlOf(file: string, text: string): unknown {
  try {
    return parseYaml(file, text);
  } catch (error) {
    if (error instanceof AgentDefinitionError) throw new WorkflowDefinitionError(file, error.issues);
    throw error;
  }
}

/** The workflow's name from its file name, checked like any workflow name. */
function nameFromFile(file: string): string {
  const name = basename(file, extname(file));
  const checked = workflowNameSchema.safeParse(name);
  if (!checked.success) {
    fail(
      file,
      "(file)",
      `the file name '${name}' is the workflow's name and ${checked.error.issues[0]?.message}: rename the file`,
    );
  }
  return name;
}

/**
 * Parses and validates one workflow's text. `file` gives the name
 * (`<name>.yaml`) and is named in every error; inline agents'
 * `prompt.system_file` is read relative to it. Refs are checked against the
 * agents by `loadProject` / `resolveWorkflowInstance`, which know them.
 */
export async function parseWorkflowDefinition(file: string, text: string): Promise<WorkflowDefinition> {
  const name = nameFromFile(file);
  const raw = yamlOf(file, text);
  if (raw === null || raw === undefined) {
    fail(
      file,
      "(file)",
      "the file is empty: write at least 'agents:' with one agent, e.g. 'agents: { alice: { ref: alice } }'",
    );
  }
  if (typeof raw !== "object" || Array.isArray(raw)) {
    fail(
      file,
      "(file)",
      `must be a mapping of keys (agents, workspace, setup, kickoff, …), not ${Array.isArray(raw) ? "a list" : typeof raw}`,
    );
  }
  const parsed = workflowFileSchema.safeParse(raw);
  if (!parsed.success) {
    const issues = definitionIssues(parsed.error, name, raw).map((issue) =>
      issue.path === "agents" && issue.message.startsWith("is required")
        ? { path: "agents", message: "is required: list the agents, e.g. 'agents: { alice: { ref: alice } }'" }
        : {
            path: issue.path,
            message: issue.message.replace(/^must be a record,/, "must be a mapping (key: value lines),"),
          },
    );
    throw new WorkflowDefinitionError(file, issues);
  }
  const data = parsed.data;
  const issues: DefinitionIssue[] = [];
  if (data.name !== undefined && data.name !== name) {
    issues.push({
      path: "name",
      message: `name '${data.name}' must match the file name ('${name}'): set 'name: ${name}' or rename the file to ${data.name}${extname(file)}`,
    });
  }
  const agents = new Map<string, AgentEntry>();
  const keys = Object.keys(data.agents);
  if (keys.length === 0) {
    issues.push({ path: "agents", message: "must list at least one agent, e.g. 'alice: { ref: alice }'" });
  }
  const readSystemFile = async (prompt: { system?: string; system_file?: string } | undefined) => {
    try {
      return await systemPromptOf(file, prompt);
    } catch (error) {
      if (error instanceof AgentDefinitionError) throw new Error(error.issues[0]?.message ?? error.message);
      throw error;
    }
  };
  for (const key of keys) {
    const result = await parseAgentEntry(key, data.agents[key], readSystemFile);
    if ("entry" in result) agents.set(key, result.entry);
    else {
      for (const issue of result.issues) {
        issues.push({
          path: issue.path === "(entry)" ? `agents.${key}` : `agents.${key}.${issue.path}`,
          message: issue.message,
        });
      }
    }
  }
  const setup = data.setup ?? [];
  const variables = data.variables ?? {};
  const outputs = new Map<string, number>();
  setup.forEach((step, index) => {
    if (step.shell.includes("${{")) {
      issues.push({
        path: `setup.${index}.shell`,
        message: "'${{ }}' is filled in the kickoff only; a setup step's command is run as written",
      });
    }
    if (step.as === undefined) return;
    const previous = outputs.get(step.as);
    if (previous !== undefined) {
      issues.push({
        path: `setup.${index}.as`,
        message: `'${step.as}' also names setup step ${previous}: give each step its own name`,
      });
    } else outputs.set(step.as, index);
  });
  for (const variable of Object.keys(variables)) {
    if ((BUILTIN_VARIABLES as readonly string[]).includes(variable)) {
      issues.push({
        path: `variables.${variable}`,
        message: `'${variable}' is given by every instance (its ${variable}): choose another name`,
      });
    } else if (outputs.has(variable)) {
      issues.push({
        path: `variables.${variable}`,
        message: `'${variable}' also names the output of setup step ${outputs.get(variable)}: rename one of them`,
      });
    }
  }
  for (const step of outputs.keys()) {
    if ((BUILTIN_VARIABLES as readonly string[]).includes(step)) {
      issues.push({
        path: `setup.${outputs.get(step)}.as`,
        message: `'${step}' is given by every instance (its ${step}): choose another name`,
      });
    }
  }
  if (data.kickoff !== undefined)
    issues.push(
      ...kickoffIssues(data.kickoff, keys, [...BUILTIN_VARIABLES, ...outputs.keys(), ...Object.keys(variables)]),
    );
  if (issues.length > 0) throw new WorkflowDefinitionError(file, issues);
  return {
    name,
    file,
    ...(data.description !== undefined ? { description: data.description } : {}),
    agents,
    workspace: { persistent: data.workspace?.persistent ?? false },
    setup: setup.map((step) => ({ shell: step.shell, ...(step.as !== undefined ? { as: step.as } : {}) })),
    variables,
    ...(data.kickoff !== undefined ? { kickoff: data.kickoff } : {}),
  };
}

/** Holes that name nothing, and @mentions of agents the workflow does not have. */
function kickoffIssues(kickoff: string, agents: readonly string[], known: readonly string[]): DefinitionIssue[] {
  const issues: DefinitionIssue[] = [];
  try {
    for (const variable of kickoffVariables(kickoff)) {
      if (known.includes(variable)) continue;
      const suggestion = closestKey(variable, known);
      issues.push({
        path: "kickoff",
        message: `\${{ ${variable} }} names no setup output or variable${suggestion ? `; did you mean '${suggestion}'?` : ""}: name a setup step 'as: ${variable}', or declare it under 'variables:'`,
      });
    }
  } catch (error) {
    if (!(error instanceof KickoffSyntaxError)) throw error;
    issues.push({ path: "kickoff", message: error.message });
  }
  for (const mention of parseMentions(kickoff)) {
    if (agents.includes(mention)) continue;
    const suggestion = closestKey(mention, agents);
    issues.push({
      path: "kickoff",
      message: `@${mention} is not an agent of this workflow${suggestion ? `; did you mean @${suggestion}?` : ""}: add '${mention}' under 'agents', or fix the mention`,
    });
  }
  return issues;
}

/** Reads and validates one `<name>.yaml`. */
export async function loadWorkflowDefinition(file: string): Promise<WorkflowDefinition> {
  const path = resolve(file);
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return fail(
      path,
      "(file)",
      code === "ENOENT"
        ? "the file does not exist: create it, or fix the path"
        : `cannot be read (${(error as Error).message})`,
    );
  }
  return parseWorkflowDefinition(path, text);
}

/**
 * Every `<name>.yaml` / `<name>.yml` of a `.workflows/` directory, keyed by
 * name in name order; a missing directory holds no workflows. Throws a
 * WorkflowDefinitionError, or a list of them when several files are wrong.
 */
export async function loadWorkflowDefinitions(dir: string): Promise<Map<string, WorkflowDefinition>> {
  const root = resolve(dir);
  const info = await stat(root).catch(() => undefined);
  if (info === undefined) return new Map();
  if (!info.isDirectory())
    fail(root, "(file)", "is not a directory: .workflows must hold one <name>.yaml per workflow");
  const files = (await readdir(root)).filter((file) => EXTENSIONS.includes(extname(file))).sort();
  const workflows = new Map<string, WorkflowDefinition>();
  const problems: WorkflowDefinitionError[] = [];
  for (const file of files) {
    try {
      const workflow = await loadWorkflowDefinition(join(root, file));
      const previous = workflows.get(workflow.name);
      if (previous)
        fail(
          workflow.file,
          "(file)",
          `workflow '${workflow.name}' is also defined in ${basename(previous.file)}: keep one of the two files`,
        );
      workflows.set(workflow.name, workflow);
    } catch (error) {
      if (!(error instanceof WorkflowDefinitionError)) throw error;
      problems.push(error);
    }
  }
  if (problems.length === 1 && problems[0]) throw problems[0];
  if (problems.length > 1) throw new WorkflowDefinitionsError(problems);
  return workflows;
}

/** Several workflow files are wrong: each one's error. */
export class WorkflowDefinitionsError extends Error {
  override readonly name = "WorkflowDefinitionsError";
  constructor(readonly errors: readonly WorkflowDefinitionError[]) {
    super(errors.map((error) => error.message).join("\n"));
  }
}
