import { readdir, readFile, stat } from "node:fs/promises";
import { basename, dirname, extname, join, resolve } from "node:path";
import { parseDocument } from "yaml";
import { AgentDefinitionError, type DefinitionIssue, displayPath } from "./agent-definition-error.js";
import { type AgentDefinition, agentDefinitionSchema } from "./agent-definition-schema.js";
import { definitionIssues } from "./format-issues.js";

const EXTENSIONS = [".yaml", ".yml"];

function fail(file: string, path: string, message: string): never {
  throw new AgentDefinitionError(file, [{ path, message }]);
}

/** YAML text → the document's value; a syntax error names its line and column. */
export function parseYaml(file: string, text: string): unknown {
  const document = parseDocument(text);
  const error = document.errors[0];
  if (error) {
    const position = error.linePos?.[0];
    const at = position ? `line ${position.line}, column ${position.col}` : "unknown position";
    if (error.code === "MULTIPLE_DOCS") {
      fail(
        file,
        "(file)",
        `holds more than one YAML document (a '---' at ${at}): one definition per file; remove the '---' and what follows, or move it to a file of its own`,
      );
    }
    const reason = error.message.split("\n")[0]?.replace(/ at line \d+, column \d+:?$/, "") ?? "syntax error";
    fail(file, "(file)", `not valid YAML at ${at}: ${reason}`);
  }
  try {
    return document.toJS();
  } catch (error) {
    // What parses but has no value: an alias to no anchor (`*m` without `&m`), or too many aliases.
    return fail(file, "(file)", `not valid YAML: ${(error as Error).message.split("\n")[0]}`);
  }
}

/**
 * A definition file's text. A file that is there but cannot be read (a directory named `x.yaml`,
 * no permission) is that file's problem, not the caller's: an AgentDefinitionError naming it.
 * A file that is gone throws as `readFile` does (ENOENT), so a caller can tell a deletion apart.
 */
export async function readDefinitionText(file: string): Promise<string> {
  try {
    return await readFile(file, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") throw error;
    return fail(
      file,
      "(file)",
      `cannot be read (${(error as Error).message}): make it a readable file, or move it out of the directory`,
    );
  }
}

/**
 * Parses and validates one definition's text (no file I/O except
 * `prompt.system_file`, read relative to `file`). `file` gives the expected
 * name (`<name>.yaml`) and is named in every error.
 */
export async function parseAgentDefinition(file: string, text: string): Promise<AgentDefinition> {
  const expected = basename(file, extname(file));
  const raw = parseYaml(file, text);
  if (raw === null || raw === undefined) {
    fail(file, "(file)", `the file is empty: write at least 'name: ${expected}' and 'model: <model id>'`);
  }
  if (typeof raw !== "object" || Array.isArray(raw)) {
    fail(
      file,
      "(file)",
      `must be a mapping of keys (name, model, …), not ${Array.isArray(raw) ? "a list" : typeof raw}`,
    );
  }
  const parsed = agentDefinitionSchema.safeParse(raw);
  if (!parsed.success) throw new AgentDefinitionError(file, definitionIssues(parsed.error, expected, raw));
  const definition = parsed.data;
  if (definition.name !== expected) {
    fail(
      file,
      "name",
      `name '${definition.name}' must match the file name ('${expected}'): set 'name: ${expected}' or rename the file to ${definition.name}${extname(file)}`,
    );
  }
  return { ...definition, systemPrompt: await systemPromptOf(file, definition.prompt), file };
}

export async function systemPromptOf(file: string, prompt: { system?: string; system_file?: string } | undefined) {
  const promptFile = systemPromptFile(file, prompt);
  if (promptFile === undefined) return prompt?.system ?? "";
  try {
    return await readFile(promptFile, "utf8");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const why =
      code === "ENOENT"
        ? `file ${displayPath(promptFile)} does not exist: create it, or fix the path (it is relative to the YAML file)`
        : `cannot read ${displayPath(promptFile)} (${(error as Error).message})`;
    return fail(file, "prompt.system_file", why);
  }
}

/** The absolute path of an agent file's `prompt.system_file` (relative to the YAML file), when it has one. */
export function systemPromptFile(
  file: string,
  prompt: { system?: string; system_file?: string } | undefined,
): string | undefined {
  return prompt?.system_file === undefined ? undefined : resolve(dirname(file), prompt.system_file);
}

/** Reads and validates one `<name>.yaml`. */
export async function loadAgentDefinition(file: string): Promise<AgentDefinition> {
  const path = resolve(file);
  return parseAgentDefinition(path, await readDefinitionText(path));
}

/**
 * Every `<name>.yaml` / `<name>.yml` in `dir`, validated, keyed by agent name
 * (in name order). Throws an AgentDefinitionError naming the file, the field
 * and the fix; a missing directory is an error of kind `missing-dir`.
 */
export async function loadAgentDefinitions(dir: string): Promise<Map<string, AgentDefinition>> {
  const root = resolve(dir);
  const isDirectory = await stat(root).then(
    (info) => info.isDirectory(),
    () => undefined,
  );
  if (isDirectory === undefined) {
    throw new AgentDefinitionError(
      root,
      [
        {
          path: "(file)",
          message:
            "the agents directory does not exist: create it with one <name>.yaml per agent, or point MONIRO_AGENTS_DIR at the right directory",
        },
      ],
      "missing-dir",
    );
  }
  if (!isDirectory)
    fail(root, "(file)", "is not a directory: MONIRO_AGENTS_DIR must name the directory of <name>.yaml files");
  const files = (await readdir(root)).filter((file) => EXTENSIONS.includes(extname(file))).sort();
  const definitions = new Map<string, AgentDefinition>();
  const problems: AgentDefinitionError[] = [];
  for (const file of files) {
    try {
      const definition = await loadAgentDefinition(join(root, file));
      const previous = definitions.get(definition.name);
      if (previous) {
        fail(
          definition.file,
          "name",
          `agent '${definition.name}' is also defined in ${displayPath(previous.file)}: keep one of the two files`,
        );
      }
      definitions.set(definition.name, definition);
    } catch (error) {
      if (!(error instanceof AgentDefinitionError)) throw error;
      problems.push(error);
    }
  }
  if (problems.length === 1 && problems[0]) throw problems[0];
  if (problems.length > 1) throw new AgentDefinitionsError(problems);
  return new Map([...definitions.entries()].sort(([a], [b]) => a.localeCompare(b)));
}

/** Several files are wrong: each one's error, so one run shows everything to fix. */
export class AgentDefinitionsError extends AgentDefinitionError {
  constructor(readonly errors: readonly AgentDefinitionError[]) {
    super(
      errors[0]?.file ?? "",
      errors.flatMap((error) => error.issues as DefinitionIssue[]),
    );
    this.message = errors.map((error) => error.message).join("\n");
  }
}
