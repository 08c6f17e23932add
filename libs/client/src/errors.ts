import { errorBodySchema } from "@moniro/api";

/** What to do when nothing answers at the gateway's URL. */
export const UNREACHABLE_HINT = "is the gateway running? start it with `moniro up` or set MONIRO_GATEWAY_URL";

/** The gateway answered with an error status: `{ error: { code, message } }` as it sent it. */
export class MoniroApiError extends Error {
  override readonly name = "MoniroApiError";
  constructor(
    /** HTTP status. */
    readonly status: number,
    /** The API's error code (`unknown_agent`, …), or `http_<status>` when the body was not an API error. */
    readonly code: string,
    message: string,
    /** `METHOD url` of the request. */
    readonly url: string,
    readonly details?: Record<string, unknown>,
    /** The parsed body (JSON) or its text. */
    readonly body?: unknown,
  ) {
    super(message);
  }

  /** From an error answer's body (JSON `{error}` or anything else). */
  static from(status: number, url: string, text: string): MoniroApiError {
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {
      // not JSON: keep the text
    }
    const parsed = errorBodySchema.safeParse(body);
    if (parsed.success) {
      const { code, message, details } = parsed.data.error;
      return new MoniroApiError(status, code, message, url, details, body);
    }
    const snippet = text.replace(/\s+/g, " ").trim().slice(0, 200);
    return new MoniroApiError(
      status,
      `http_${status}`,
      `${url} answered ${status}${snippet ? `: ${snippet}` : ""}`,
      url,
      undefined,
      body,
    );
  }
}

/** Nothing answered at the gateway's URL (refused, unknown host, timeout, connection lost before an answer). */
export class GatewayUnreachableError extends Error {
  override readonly name = "GatewayUnreachableError";
  constructor(
    /** The gateway's base URL. */
    readonly baseUrl: string,
    /** Why: ECONNREFUSED, ENOTFOUND, a timeout, … */
    readonly reason: string,
    options?: { cause?: unknown },
  ) {
    super(`cannot reach the gateway at ${baseUrl} (${reason}): ${UNREACHABLE_HINT}`, options);
  }
}

/**
 * The short reason of a failed request: its code (ECONNREFUSED, …; fetch puts
 * it in the error's cause, node:http on the error itself), else its message.
 */
export function networkReason(error: unknown): string {
  const err = error as {
    name?: string;
    code?: string;
    message?: string;
    cause?: { name?: string; code?: string; message?: string };
  };
  const cause = err?.cause;
  if (err?.name === "TimeoutError" || cause?.name === "TimeoutError") return "no answer in time";
  if (cause?.code) return cause.code;
  if (err?.code && err.code !== "ABORT_ERR") return err.code;
  if (cause?.message) return cause.message;
  return err?.message ?? String(error);
}
