import {
  type AgentDefinitionFields,
  type AgentDefinitionInput,
  agentDefinitionSchema,
  definitionIssues,
} from "@moniro/config";
import { RegistryInvalidError } from "./errors.js";

/**
 * Validates a definition for the registry (the YAML's fields, as JSON). The
 * registry holds no files, so `prompt.system_file` is refused: whoever
 * applies a definition inlines it as `prompt.system` (the file sync and
 * `moniro apply` do). `name` defaults to `agent` and must equal it.
 */
export function validateDefinition(agent: string, raw: unknown): AgentDefinitionFields {
  if (raw === null || typeof raw !== "object" || Array.isArray(raw)) {
    throw new RegistryInvalidError(agent, [
      {
        path: "(file)",
        message: `the definition must be an object of fields (name, model, …), not ${Array.isArray(raw) ? "a list" : raw === null ? "null" : typeof raw}`,
      },
    ]);
  }
  const input = { name: agent, ...(raw as Record<string, unknown>) };
  const parsed = agentDefinitionSchema.safeParse(input);
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
