/**
 * Thrown by `ToolContext.requestScheduler` when no scheduler answers
 * (NATS no-responders or timeout). The `cron` tool turns it into an error result.
 */
export class SchedulerUnavailableError extends Error {
  override readonly name = "SchedulerUnavailableError";
  readonly retryable = true;
  constructor(
    readonly op: string,
    readonly detail: string,
    /** The subject asked, when the caller knows its namespace. */
    readonly subject = `moniro.sched.${op}`,
  ) {
    super(`no scheduler answered ${subject} (${detail})`);
  }
}

/** A path the model gave resolves outside the workspace (traversal, absolute path, symlink). */
/** A file tool was given a path that exists but is not a regular file (a FIFO, device or socket). */
export class NotRegularFileError extends Error {
  override readonly name = "NotRegularFileError";
  constructor(readonly path: string) {
    super(`'${path}' is not a regular file (a FIFO, device or socket)`);
  }
}

export class PathOutsideWorkspaceError extends Error {
  override readonly name = "PathOutsideWorkspaceError";
  constructor(
    readonly requested: string,
    readonly why: string,
  ) {
    super(
      `path '${requested}' is outside the workspace (${why}); use a path relative to the workspace root, without '..' leaving it`,
    );
  }
}
