import type { DefinitionIssue } from "@moniro/config";

/** A definition the registry refuses: each issue names the field and the fix. */
export class RegistryInvalidError extends Error {
  override readonly name = "RegistryInvalidError";
  constructor(
    readonly agent: string,
    readonly issues: readonly DefinitionIssue[],
  ) {
    super(
      `invalid definition of agent '${agent}': ${issues.map((issue) => (issue.path === "(file)" ? issue.message : `${issue.path}: ${issue.message}`)).join("; ")}`,
    );
  }
}

/**
 * A write that lost a race: the agent exists although it should not (create),
 * or its revision is not the one the caller read (`ifRevision`).
 */
export class RegistryConflictError extends Error {
  override readonly name = "RegistryConflictError";
  constructor(
    readonly agent: string,
    /** The revision the registry holds now (undefined when the agent does not exist). */
    readonly current: number | undefined,
    message: string,
    /** `exists`: the name is taken (create, or the other bucket); `revision`: not at the expected revision. */
    readonly kind: "exists" | "revision" = "revision",
  ) {
    super(message);
  }
}

/** A write to an agent that does not exist (remove, or an update with `ifRevision`). */
export class RegistryNotFoundError extends Error {
  override readonly name = "RegistryNotFoundError";
  constructor(readonly agent: string) {
    super(`no agent named '${agent}' is in the registry`);
  }
}
