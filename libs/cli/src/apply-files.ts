import { readdir, readFile, stat } from "node:fs/promises";
import { basename, extname, join, resolve } from "node:path";
import {
  AgentDefinitionError,
  agentDefinitionSchema,
  definitionIssues,
  displayPath,
  parseYaml,
  systemPromptOf,
} from "@moniro/config";

const EXTENSIONS = [".yaml", ".yml"];

/** A file `moniro apply` read: the agent's name and the definition to send, or what is wrong with it. */
export type AppliedFile =
  | { file: string; name: string; definition: Record<string, unknown> }
  | { file: string; name?: string; error: string };

function fail(file: string, path: string, message: string): never {
  throw new AgentDefinitionError(file, [{ path, message }]);
}

/**
 * One definition's YAML as the registry takes it: a mapping, with
 * `prompt.system_file` (relative to the file) read and inlined as
 * `prompt.system`, since the API holds no files. Errors name the file.
 */
export async function readDefinitionText(file: string, text: string): Promise<Record<string, unknown>> {
  return definitionOfValue(file, parseYaml(file, text));
}

/** A parsed definition (a mapping) as the registry takes it: `prompt.system_file`, relative to `file`, inlined. */
export async function definitionOfValue(file: string, raw: unknown): Promise<Record<string, unknown>> {
  if (raw === null || raw === undefined) fail(file, "(file)", "the file is empty: write at least 'model: <model id>'");
  if (typeof raw !== "object" || Array.isArray(raw)) {
    fail(
      file,
      "(file)",
      `must be a mapping of keys (name, model, …), not ${Array.isArray(raw) ? "a list" : typeof raw}`,
    );
  }
  const definition = { ...(raw as Record<string, unknown>) };
  const prompt = definition.prompt;
  if (prompt && typeof prompt === "object" && !Array.isArray(prompt) && "system_file" in prompt) {
    const { system_file: systemFile, ...rest } = prompt as Record<string, unknown>;
    if (typeof systemFile !== "string" || systemFile === "") {
      fail(file, "prompt.system_file", "must name a file, relative to the YAML file");
    }
    if (rest.system !== undefined) fail(file, "prompt", "set either 'system' or 'system_file', not both");
    definition.prompt = { ...rest, system: await systemPromptOf(file, { system_file: systemFile }) };
  }
  return definition;
}

/** Reads and checks one file: its name (`name:`, else the file's), the definition with the prompt inlined. */
export async function readApplyFile(file: string): Promise<AppliedFile> {
  const fallback = basename(file, extname(file));
  try {
    const definition = await readDefinitionText(file, await readFile(file, "utf8"));
    const name = typeof definition.name === "string" ? definition.name : fallback;
    const input = { ...definition, name };
    const parsed = agentDefinitionSchema.safeParse(input);
    if (!parsed.success) throw new AgentDefinitionError(file, definitionIssues(parsed.error, name, input));
    return { file, name, definition };
  } catch (error) {
    if (error instanceof AgentDefinitionError) return { file, name: fallback, error: error.message };
    return { file, name: fallback, error: `${displayPath(file)}: cannot read it (${(error as Error).message})` };
  }
}

/** The YAML files `apply -f <path>` takes: the file itself, or every `*.yaml` / `*.yml` of a directory, by name. */
export async function applyFilesOf(path: string): Promise<string[]> {
  const root = resolve(path);
  const info = await stat(root).catch(() => undefined);
  if (!info) throw new Error(`${path} does not exist: give a YAML file or a directory of them (e.g. .agents/)`);
  if (!info.isDirectory()) return [root];
  return (await readdir(root))
    .filter((name) => EXTENSIONS.includes(extname(name)))
    .sort()
    .map((name) => join(root, name));
}
