import type { AgentDefinition, AgentDefinitionFields } from "@moniro/config";
import type { AgentRecord } from "./agent-record.js";

/** A loaded file's definition as the registry stores it: `prompt.system_file` inlined as `prompt.system`. */
export function registryFieldsOf(definition: AgentDefinition): AgentDefinitionFields {
  const { systemPrompt, file: _file, ...fields } = definition;
  if (fields.prompt?.system_file === undefined) return fields;
  const { system_file: _systemFile, ...prompt } = fields.prompt;
  return { ...fields, prompt: { ...prompt, system: systemPrompt } };
}

/**
 * A registry record as the services' loaders see a definition: the fields,
 * the composed system prompt, and where it came from (`file` names the YAML
 * file of a file record, `registry:<name>` otherwise).
 */
export function definitionOf(record: AgentRecord): AgentDefinition {
  return {
    ...record.definition,
    systemPrompt: record.definition.prompt?.system ?? "",
    file: record.file ?? `registry:${record.name}`,
  };
}
