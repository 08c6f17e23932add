import { AgentDefinitionError, agentDefinitionSchema, definitionIssues } from "@moniro/config";
import { CliError } from "./cli-errors.js";
import { EXIT } from "./exit-codes.js";

/** The flags of `agent create` and `new` that make a definition. */
export interface DefinitionFlags {
  model?: string;
  system?: string;
  role?: string;
  expertise?: string;
  style?: string;
  backend?: string;
}

/** The definition fields the flags give (only those set): model, backend, prompt.system, soul. */
export function definitionFromFlags(flags: DefinitionFlags): Record<string, unknown> {
  const soul = {
    ...(flags.role !== undefined ? { role: flags.role } : {}),
    ...(flags.expertise !== undefined
      ? {
          expertise: flags.expertise
            .split(",")
            .map((s) => s.trim())
            .filter(Boolean),
        }
      : {}),
    ...(flags.style !== undefined ? { style: flags.style } : {}),
  };
  return {
    ...(flags.model !== undefined ? { model: flags.model } : {}),
    ...(flags.backend !== undefined ? { backend: flags.backend } : {}),
    ...(flags.system !== undefined ? { prompt: { system: flags.system } } : {}),
    ...(Object.keys(soul).length > 0 ? { soul } : {}),
  };
}

/** `base` with `overrides` on top; `soul` and `prompt` are merged field by field. */
export function mergeDefinitions(
  base: Record<string, unknown>,
  overrides: Record<string, unknown>,
): Record<string, unknown> {
  const merged: Record<string, unknown> = { ...base, ...overrides };
  for (const key of ["soul", "prompt"]) {
    const a = base[key];
    const b = overrides[key];
    if (a && b && typeof a === "object" && typeof b === "object") merged[key] = { ...a, ...b };
  }
  return merged;
}

/**
 * Validates a definition as the registry will (the same schema), so a bad
 * field is reported before anything is written; `where` names the source
 * (`--model`, a file). Exit 2: what was given is wrong.
 */
export function checkDefinition(name: string, definition: Record<string, unknown>, where: string): void {
  const input = { ...definition, name };
  const parsed = agentDefinitionSchema.safeParse(input);
  if (parsed.success) return;
  const message = new AgentDefinitionError(where, definitionIssues(parsed.error, name, input)).message;
  throw new CliError(message, EXIT.usage);
}
