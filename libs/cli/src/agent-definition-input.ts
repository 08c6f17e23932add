import { AgentDefinitionError, agentDefinitionSchema, definitionIssues } from "@moniro/config";
import { CliError } from "./cli-errors.js";
import { EXIT } from "./exit-codes.js";

/**
 * Checks of a definition with @moniro/config's schema (loaded only by the
 * commands that write definitions: it is most of the CLI's start-up cost).
 */

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
