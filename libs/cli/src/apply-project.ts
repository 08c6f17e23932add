import { readFile } from "node:fs/promises";
import { dirname, resolve } from "node:path";
import {
  AgentDefinitionError,
  agentDefinitionSchema,
  definitionIssues,
  displayPath,
  findProjectFile,
  parseYaml,
  projectFileSchema,
} from "@moniro/config";
import { type AppliedFile, definitionOfValue, readApplyFile } from "./apply-files.js";

/** An inline agent of moniro.yaml (entry `index`), checked like a file; its `system_file` is relative to moniro.yaml. */
async function inlineEntry(file: string, index: number, raw: Record<string, unknown>): Promise<AppliedFile> {
  const name = typeof raw.name === "string" ? raw.name : undefined;
  const at = (error: AgentDefinitionError) =>
    `${displayPath(file)}: agents.${index}: ${error.issues.map((issue) => `${issue.path}: ${issue.message}`).join("; ")}`;
  try {
    const definition = await definitionOfValue(file, raw);
    if (name === undefined) {
      throw new AgentDefinitionError(file, [
        { path: "name", message: "an inline agent needs a name: add 'name: <agent>'" },
      ]);
    }
    const parsed = agentDefinitionSchema.safeParse(definition);
    if (!parsed.success) throw new AgentDefinitionError(file, definitionIssues(parsed.error, name, definition));
    return { file, name, definition };
  } catch (error) {
    if (error instanceof AgentDefinitionError) return { file, ...(name ? { name } : {}), error: at(error) };
    throw error;
  }
}

/**
 * The agents `moniro apply -f <dir>` takes when `<dir>` holds a moniro.yaml:
 * those it registers (agent files relative to it, inline agents), in its
 * order; `undefined` when there is no moniro.yaml. A moniro.yaml that is not
 * valid is one failed entry naming its field and the fix.
 */
export async function applyProjectOf(dir: string): Promise<AppliedFile[] | undefined> {
  const file = await findProjectFile(dir);
  if (file === undefined) return undefined;
  let value: unknown;
  try {
    value = parseYaml(file, await readFile(file, "utf8"));
  } catch (error) {
    if (error instanceof AgentDefinitionError) return [{ file, error: error.message }];
    throw error;
  }
  const parsed = projectFileSchema.safeParse(value ?? {});
  if (!parsed.success) {
    return [{ file, error: new AgentDefinitionError(file, definitionIssues(parsed.error, "", value)).message }];
  }
  const applied: AppliedFile[] = [];
  for (const [index, entry] of (parsed.data.agents ?? []).entries()) {
    applied.push(
      typeof entry === "string"
        ? await readApplyFile(resolve(dirname(file), entry))
        : await inlineEntry(file, index, entry),
    );
  }
  return applied;
}
