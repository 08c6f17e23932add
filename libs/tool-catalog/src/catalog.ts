import type { LlmToolSpec } from "@moniro/ports";
import { z } from "zod";
import { compactSchema } from "./compact-schema.js";
import type { ToolDefinition } from "./tool.js";
import { catalogTools } from "./tools/all-tools.js";

/** Every tool the executor runs, by name (in the order the model sees them). */
export const toolCatalog: ReadonlyMap<string, ToolDefinition> = new Map(catalogTools.map((tool) => [tool.name, tool]));
export const toolNames: readonly string[] = catalogTools.map((tool) => tool.name);

/** The spec the model sees: name, description, JSON Schema of the input (no `$schema` noise). */
export function toolSpec(definition: ToolDefinition): LlmToolSpec {
  const inputSchema = compactSchema(z.toJSONSchema(definition.input, { io: "input" })) as Record<string, unknown>;
  return { name: definition.name, description: definition.description, inputSchema };
}

let cachedSpecs: LlmToolSpec[] | undefined;

/** Specs of every catalog tool, computed once. */
export function allToolSpecs(): LlmToolSpec[] {
  cachedSpecs ??= catalogTools.map(toolSpec);
  return cachedSpecs.map((spec) => ({ ...spec }));
}
