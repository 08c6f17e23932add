import { relative } from "node:path";

export interface DefinitionIssue {
  /** Dotted path of the offending field (`prompt.system_file`), or `(file)` for the file as a whole. */
  path: string;
  /** What is wrong and how to fix it. */
  message: string;
}

/** How a path is shown: relative to the working directory when below it (`.agents/alice.yaml`). */
export function displayPath(file: string, cwd = process.cwd()): string {
  const shown = relative(cwd, file);
  return shown.startsWith("..") || shown === "" ? file : shown;
}

/**
 * A definition that cannot be used. The message names the file, each bad
 * field and the fix, e.g. `.agents/alice.yaml: prompt: set either 'system'
 * or 'system_file', not both`; several problems are listed one per line.
 */
export class AgentDefinitionError extends Error {
  override readonly name = "AgentDefinitionError";

  constructor(
    /** The YAML file (or the agents directory) at fault. */
    readonly file: string,
    readonly issues: readonly DefinitionIssue[],
    /** `missing-dir` when the agents directory does not exist; callers may treat that as "no agents". */
    readonly kind: "invalid" | "missing-dir" = "invalid",
  ) {
    super(formatDefinitionIssues(file, issues, "invalid agent definition"));
  }
}

/**
 * `<file>: <path>: <message>` for one issue; for several, `<file>: <what> (N problems)`
 * then one indented line per issue. Shared by agent and workflow definition errors.
 */
export function formatDefinitionIssues(file: string, issues: readonly DefinitionIssue[], what: string): string {
  const where = displayPath(file);
  const line = (issue: DefinitionIssue) =>
    issue.path === "(file)" ? issue.message : `${issue.path}: ${issue.message}`;
  if (issues.length === 1 && issues[0]) return `${where}: ${line(issues[0])}`;
  return `${where}: ${what} (${issues.length} problems)\n${issues.map((issue) => `  ${line(issue)}`).join("\n")}`;
}
