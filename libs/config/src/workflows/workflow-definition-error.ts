import { type DefinitionIssue, formatDefinitionIssues } from "../agents/agent-definition-error.js";

/**
 * A workflow file (or `moniro.yaml`) that cannot be used. The message names
 * the file, each bad field and the fix, e.g. `.workflows/review.yaml:
 * agents.alice.soul: a ref agent takes its soul from .agents/alice.yaml: …`;
 * several problems are listed one per line.
 */
export class WorkflowDefinitionError extends Error {
  override readonly name = "WorkflowDefinitionError";

  constructor(
    /** The YAML file at fault. */
    readonly file: string,
    readonly issues: readonly DefinitionIssue[],
  ) {
    super(formatMessage(file, issues));
  }
}

function formatMessage(file: string, issues: readonly DefinitionIssue[]): string {
  const what = /(^|[/\\])moniro\.ya?ml$/.test(file) ? "invalid project file" : "invalid workflow definition";
  return formatDefinitionIssues(file, issues, what);
}

/** Several files of a project are wrong: each one's error, so one run shows everything to fix. */
export class ProjectConfigError extends Error {
  override readonly name = "ProjectConfigError";

  constructor(readonly errors: readonly Error[]) {
    super(errors.map((error) => error.message).join("\n"));
  }
}
