import {
  type AgentDefinitionFields,
  type AgentDefinitionInput,
  agentDefinitionSchema,
  definitionIssues,
  INLINE_SEPARATOR,
} from "@moniro/config";
import { CHILD_SEPARATOR } from "@moniro/envelopes";
import { RegistryInvalidError } from "./errors.js";

/**
 * Validates a definition for the registry (the YAML's fields, as JSON). The
 * registry holds no files, so `prompt.system_file` is refused: whoever
 * applies a definition inlines it as `prompt.system` (the file sync and
 * `moniro apply` do). `name` defaults to `agent` and must equal it.
 */
export function validateDefinition(
  agent: string,
  raw: unknown,
  options: { source?: string | undefined } = {},
): AgentDefinitionFields {
  if (raw === null || typeof raw !== "object" || Array.isArray(raw)) {
    throw new RegistryInvalidError(agent, [
      {
        path: "(file)",
        message: `the definition must be an object of fields (name, model, …), not ${Array.isArray(raw) ? "a list" : raw === null ? "null" : typeof raw}`,
      },
    ]);
  }
  const input = { name: agent, ...(raw as Record<string, unknown>) };
  // `--` names sub-agents (`<parent>--<id>`), which are never registry definitions: a definition holding it
  // (an inline agent `code--review__main__helper` too) would be taken for a child of `code`.
  if (agent.includes(CHILD_SEPARATOR)) {
    throw new RegistryInvalidError(agent, [
      {
        path: "name",
        message: `'${agent}' may not contain '${CHILD_SEPARATOR}': names with it are reserved for sub-agents (<parent>${CHILD_SEPARATOR}<id>), which are never definitions; use a single '-'${options.source === "workflow" ? " in the workflow's name, tag and agent key" : ""}`,
      },
    ]);
  }
  // An inline agent of a workflow instance (source `workflow`) runs as `<workflow>__<tag>__<key>`, a name
  // no other source may take: its fields are checked under the key, then it gets its instance name back.
  const inline = options.source === "workflow" ? inlineParts(agent) : undefined;
  if (options.source === "workflow" && inline === undefined) {
    throw new RegistryInvalidError(agent, [
      { path: "name", message: `a workflow's inline agent is named <workflow>__<tag>__<agent>, not '${agent}'` },
    ]);
  }
  const parsed = agentDefinitionSchema.safeParse(
    inline !== undefined && input.name === agent ? { ...input, name: inline } : input,
  );
  if (parsed.success && inline !== undefined && input.name === agent) parsed.data.name = agent;
  if (!parsed.success) throw new RegistryInvalidError(agent, definitionIssues(parsed.error, agent, input));
  const definition = parsed.data;
  if (definition.name !== agent) {
    throw new RegistryInvalidError(agent, [
      { path: "name", message: `'${definition.name}' must equal the agent's name '${agent}' (or be left out)` },
    ]);
  }
  if (definition.prompt?.system_file !== undefined) {
    throw new RegistryInvalidError(agent, [
      {
        path: "prompt.system_file",
        message:
          "the registry holds no files: inline the prompt as 'prompt.system' (moniro apply -f and the agents directory do this for you)",
      },
    ]);
  }
  return definition;
}

/** The fields of a definition as stored: the validated object (its defaults filled in). */
export type StoredDefinition = AgentDefinitionFields;
export type DefinitionInput = AgentDefinitionInput;

/** The key of an inline agent's instance name `<workflow>__<tag>__<key>`, or undefined when it is not one. */
function inlineParts(agent: string): string | undefined {
  const parts = agent.split(INLINE_SEPARATOR);
  return parts.length === 3 && parts.every((part) => part !== "") ? parts[2] : undefined;
}
