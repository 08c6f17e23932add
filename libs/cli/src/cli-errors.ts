import { GatewayUnreachableError, InvalidGatewayUrlError, MoniroApiError } from "@moniro/client";
import { CommanderError } from "commander";
import { EXIT, type ExitCode } from "./exit-codes.js";

/** An error the user can act on, with its message and exit code (thrown by commands). */
export class CliError extends Error {
  override readonly name = "CliError";
  constructor(
    message: string,
    readonly exitCode: ExitCode = EXIT.failed,
    readonly hint?: string,
    /** `bare`: printed as is, without the `moniro <command>:` prefix (the seed's `Error: …` lines). */
    readonly options: { bare?: boolean } = {},
  ) {
    super(message);
  }
}

export interface Report {
  /** What goes to stderr: one line, then an optional hint line. */
  lines: string[];
  exitCode: number;
}

function apiReport(error: MoniroApiError): { exitCode: ExitCode; hint?: string } {
  if (error.status === 404) return { exitCode: EXIT.notFound };
  if (error.status === 401 || error.status === 403) {
    return {
      exitCode: EXIT.unauthorized,
      ...(error.status === 401
        ? { hint: "hint: set MONIRO_API_KEY to one of the gateway's keys (its MONIRO_API_KEYS)" }
        : {}),
    };
  }
  if (error.status === 503) return { exitCode: EXIT.unavailable };
  if (error.status === 400 || error.status === 413 || error.status === 415) return { exitCode: EXIT.usage };
  return { exitCode: EXIT.failed };
}

/**
 * What the user sees for an error, and the exit code: errors the user can act
 * on in one line naming the URL and what to do; anything else as one line
 * "unexpected error" plus how to see the stack (MONIRO_DEBUG=1). Never a stack
 * trace unless MONIRO_DEBUG is set.
 */
export function reportError(
  error: unknown,
  command: string,
  env: Record<string, string | undefined> = process.env,
): Report {
  const prefix = `moniro${command ? ` ${command}` : ""}:`;
  const debug = Boolean(env.MONIRO_DEBUG) && env.MONIRO_DEBUG !== "0";
  const stack = debug && error instanceof Error && error.stack ? [error.stack] : [];
  if (error instanceof CommanderError) {
    // commander printed its message already.
    return { lines: [], exitCode: error.exitCode === 0 ? EXIT.ok : EXIT.usage };
  }
  if (error instanceof GatewayUnreachableError) {
    return { lines: [`${prefix} ${error.message}`, ...stack], exitCode: EXIT.unreachable };
  }
  if (error instanceof InvalidGatewayUrlError) {
    return { lines: [`${prefix} ${error.message}`, ...stack], exitCode: EXIT.usage };
  }
  if (error instanceof MoniroApiError) {
    const { exitCode, hint } = apiReport(error);
    const line = error.code.startsWith("http_")
      ? `${prefix} ${error.message}`
      : `${prefix} ${error.url} answered ${error.status} ${error.code}: ${error.message}`;
    return { lines: [line, ...(hint ? [hint] : []), ...stack], exitCode };
  }
  if (error instanceof CliError) {
    return {
      lines: [
        error.options.bare ? error.message : `${prefix} ${error.message}`,
        ...(error.hint ? [error.hint] : []),
        ...stack,
      ],
      exitCode: error.exitCode,
    };
  }
  const message = error instanceof Error ? error.message : String(error);
  return {
    lines: [
      `${prefix} unexpected error: ${message.split("\n")[0]}`,
      ...(debug ? stack : ["hint: rerun with MONIRO_DEBUG=1 to see the stack trace"]),
    ],
    exitCode: EXIT.failed,
  };
}
