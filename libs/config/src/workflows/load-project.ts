import { stat } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { z } from "zod";
import { AgentDefinitionError, type DefinitionIssue, displayPath } from "../agents/agent-definition-error.js";
import { type AgentDefinition, agentDefinitionSchema } from "../agents/agent-definition-schema.js";
import { definitionIssues } from "../agents/format-issues.js";
import {
  AgentDefinitionsError,
  loadAgentDefinition,
  loadAgentDefinitions,
  parseYaml,
  readDefinitionText,
  systemPromptOf,
} from "../agents/load-agent-definitions.js";
import { strictObject } from "../agents/strict-object.js";
import {
  loadWorkflowDefinition,
  loadWorkflowDefinitions,
  type WorkflowDefinition,
  WorkflowDefinitionsError,
} from "./load-workflow.js";
import { workflowRefIssues } from "./resolve-workflow.js";
import { ProjectConfigError, WorkflowDefinitionError } from "./workflow-definition-error.js";
import { workflowNameSchema } from "./workflow-schema.js";

/** The project file's names, in the order they are looked for. */
export const PROJECT_FILES = ["moniro.yaml", "moniro.yml"] as const;

/**
 * `moniro.yaml` (seed 004 "Project Configuration"): `agents` lists agent
 * files (relative to this file) or inline agent definitions; `workflows`
 * maps each workflow's name to its file.
 */
export const projectFileSchema = strictObject({
  agents: z
    .array(
      z.union([z.string().min(1), z.record(z.string(), z.unknown())], {
        error:
          "each entry must be the path of an agent file (e.g. '.agents/alice.yaml') or an agent definition mapping",
      }),
    )
    .optional(),
  workflows: z.record(workflowNameSchema, z.string().min(1, "must be the path of the workflow file")).optional(),
});

/** The agents and workflows of one project, validated against each other. */
export interface Project {
  root: string;
  /** The `moniro.yaml` read, when there is one; without it `.agents/` and `.workflows/` were discovered. */
  configFile?: string;
  agents: Map<string, AgentDefinition>;
  workflows: Map<string, WorkflowDefinition>;
}

async function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    () => false,
  );
}

function errorsOf(error: unknown): Error[] {
  if (error instanceof AgentDefinitionsError) return [...error.errors];
  if (error instanceof WorkflowDefinitionsError) return [...error.errors];
  if (error instanceof AgentDefinitionError || error instanceof WorkflowDefinitionError) return [error];
  throw error;
}

/** An inline agent of moniro.yaml, checked like an agent file (its `system_file` is relative to moniro.yaml). */
async function inlineAgent(file: string, index: number, raw: Record<string, unknown>): Promise<AgentDefinition> {
  const at = (issue: DefinitionIssue) => ({
    path: issue.path === "(file)" ? `agents.${index}` : `agents.${index}.${issue.path}`,
    message: issue.message,
  });
  const parsed = agentDefinitionSchema.safeParse(raw);
  if (!parsed.success) {
    const name = typeof raw.name === "string" ? raw.name : "<name>";
    throw new WorkflowDefinitionError(file, definitionIssues(parsed.error, name, raw).map(at));
  }
  try {
    return { ...parsed.data, systemPrompt: await systemPromptOf(file, parsed.data.prompt), file };
  } catch (error) {
    if (error instanceof AgentDefinitionError) throw new WorkflowDefinitionError(file, error.issues.map(at));
    throw error;
  }
}

async function fromProjectFile(file: string, errors: Error[]): Promise<Omit<Project, "root">> {
  let value: unknown;
  try {
    value = parseYaml(file, await readDefinitionText(file));
  } catch (error) {
    if (error instanceof AgentDefinitionError) throw new WorkflowDefinitionError(file, error.issues);
    throw error;
  }
  const parsed = projectFileSchema.safeParse(value ?? {});
  if (!parsed.success) throw new WorkflowDefinitionError(file, definitionIssues(parsed.error, "", value));
  const base = dirname(file);
  const agents = new Map<string, AgentDefinition>();
  const sources = new Map<string, string>();
  for (const [index, entry] of (parsed.data.agents ?? []).entries()) {
    try {
      const agent =
        typeof entry === "string"
          ? await loadAgentDefinition(resolve(base, entry))
          : await inlineAgent(file, index, entry);
      const previous = sources.get(agent.name);
      if (previous !== undefined) {
        throw new WorkflowDefinitionError(file, [
          {
            path: `agents.${index}`,
            message: `agent '${agent.name}' is also given by ${previous}: keep one of the two`,
          },
        ]);
      }
      sources.set(agent.name, `agents.${index}`);
      agents.set(agent.name, agent);
    } catch (error) {
      if (typeof entry === "string" && !(await exists(resolve(base, entry)))) {
        errors.push(
          new WorkflowDefinitionError(file, [
            {
              path: `agents.${index}`,
              message: `${entry} does not exist (paths are relative to ${displayPath(file)}): create it, or fix the path`,
            },
          ]),
        );
      } else errors.push(...errorsOf(error));
    }
  }
  const workflows = new Map<string, WorkflowDefinition>();
  for (const [name, path] of Object.entries(parsed.data.workflows ?? {})) {
    try {
      const workflow = await loadWorkflowDefinition(resolve(base, path));
      if (workflow.name !== name) {
        throw new WorkflowDefinitionError(file, [
          {
            path: `workflows.${name}`,
            message: `${path} defines workflow '${workflow.name}' (its file name): register it as '${workflow.name}: ${path}', or rename the file to ${name}.yaml`,
          },
        ]);
      }
      workflows.set(name, workflow);
    } catch (error) {
      errors.push(...errorsOf(error));
    }
  }
  return { configFile: file, agents, workflows };
}

/** The project file (`moniro.yaml`, else `moniro.yml`) in `root`, when there is one. */
export async function findProjectFile(root: string): Promise<string | undefined> {
  for (const name of PROJECT_FILES) {
    const file = join(resolve(root), name);
    if (await exists(file)) return file;
  }
  return undefined;
}

/** Each problem of a failed loadProject as file + message (the message names file, field and fix). */
export function projectProblems(error: unknown): Array<{ file: string; message: string }> {
  const errors = error instanceof ProjectConfigError ? error.errors : [error];
  return errors.map((each) => {
    if (each instanceof WorkflowDefinitionError || each instanceof AgentDefinitionError) {
      return { file: each.file, message: each.message };
    }
    throw each;
  });
}

/**
 * Loads a project: the agents and workflows `moniro.yaml` registers, or
 * without it every `.agents/*.yaml` and `.workflows/*.yaml` below `root`.
 * Every ref must name an agent, and no inline agent may take a defined
 * agent's name. Problems of every file are gathered into one
 * ProjectConfigError (one file's problem alone is thrown as is).
 */
export async function loadProject(root: string): Promise<Project> {
  const dir = resolve(root);
  const errors: Error[] = [];
  const configFile = await findProjectFile(dir);
  let loaded: Omit<Project, "root">;
  if (configFile !== undefined) loaded = await fromProjectFile(configFile, errors);
  else {
    let agents = new Map<string, AgentDefinition>();
    let workflows = new Map<string, WorkflowDefinition>();
    try {
      agents = await loadAgentDefinitions(join(dir, ".agents"));
    } catch (error) {
      if (!(error instanceof AgentDefinitionError && error.kind === "missing-dir")) errors.push(...errorsOf(error));
    }
    try {
      workflows = await loadWorkflowDefinitions(join(dir, ".workflows"));
    } catch (error) {
      errors.push(...errorsOf(error));
    }
    loaded = { agents, workflows };
  }
  // Refs are checked only against a complete set of agents: a broken agent file is reported as itself.
  const agentsComplete = !errors.some((error) => error instanceof AgentDefinitionError);
  for (const workflow of agentsComplete ? loaded.workflows.values() : []) {
    const issues = workflowRefIssues(workflow, loaded.agents);
    if (issues.length > 0) errors.push(new WorkflowDefinitionError(workflow.file, issues));
  }
  if (errors.length === 1 && errors[0]) throw errors[0];
  if (errors.length > 1) throw new ProjectConfigError(errors);
  return { root: dir, ...loaded };
}
