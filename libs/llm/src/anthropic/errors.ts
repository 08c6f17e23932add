import { APIConnectionError, APIConnectionTimeoutError, APIError } from "@anthropic-ai/sdk";
import { LlmError } from "@moniro/ports";

/** The API's wording when the prompt does not fit the model's context window. */
const CONTEXT_OVERFLOW =
  /prompt is too long|exceed(s|ed)? (the )?context (limit|window)|context (window|length) exceeded|maximum context length|too many (input )?tokens/i;

/** Error types (from an `event: error` in a stream, which has no status) worth retrying. */
const TRANSIENT_TYPES = new Set(["overloaded_error", "api_error", "rate_limit_error", "timeout_error"]);

/**
 * DESIGN §5 verdict for anything the SDK throws: 408/409/429/529/5xx and
 * connection failures are transient (with the server's retry hint), context
 * overflow (400 "prompt is too long", 413) is resource, other 4xx permanent.
 * Anything else is a bug: crash.
 */
export function toLlmError(error: unknown): LlmError {
  if (error instanceof LlmError) return error;
  if (error instanceof APIConnectionTimeoutError) {
    return new LlmError(`Anthropic API timed out: ${error.message}`, {
      errorClass: "transient",
      code: "timeout",
      cause: error,
    });
  }
  if (error instanceof APIConnectionError) {
    const reason = (error.cause as Error | undefined)?.message;
    return new LlmError(`cannot reach the Anthropic API: ${error.message}${reason ? ` (${reason})` : ""}`, {
      errorClass: "transient",
      code: "connection",
      cause: error,
    });
  }
  if (error instanceof APIError) return fromApiError(error);
  return new LlmError(`Anthropic provider failed: ${(error as Error)?.message ?? String(error)}`, {
    errorClass: "crash",
    code: "provider_bug",
    cause: error,
  });
}

function fromApiError(error: APIError): LlmError {
  const status = error.status;
  const type = error.type ?? "unknown_error";
  const detail = error.apiMessage ?? error.message;
  const where = status === undefined ? "Anthropic stream error" : `Anthropic API ${status}`;
  const message = `${where} ${type}: ${detail}`;
  const base = { status, cause: error };
  if (CONTEXT_OVERFLOW.test(detail) || status === 413) {
    return new LlmError(`${message} (the prompt does not fit the model's context window)`, {
      ...base,
      errorClass: "resource",
      code: "context_overflow",
    });
  }
  const transient =
    status === undefined
      ? TRANSIENT_TYPES.has(type)
      : status === 408 || status === 409 || status === 429 || status >= 500;
  if (transient) {
    const retryAfterMs = retryAfterOf(error.headers);
    return new LlmError(retryAfterMs === undefined ? message : `${message} (retry after ${retryAfterMs} ms)`, {
      ...base,
      errorClass: "transient",
      code: type,
      ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
    });
  }
  return new LlmError(`${message}${hintFor(status)}`, { ...base, errorClass: "permanent", code: type });
}

function hintFor(status: number | undefined): string {
  if (status === 401) return " (check ANTHROPIC_API_KEY)";
  if (status === 403) return " (the API key may not use this model or feature)";
  if (status === 404) return " (check the agent's model name and ANTHROPIC_BASE_URL)";
  return "";
}

/** `retry-after-ms` (ms) first, then `retry-after` (seconds or an HTTP date), as the SDK reads them. */
export function retryAfterOf(headers: Headers | undefined, now: number = Date.now()): number | undefined {
  if (!headers) return undefined;
  const ms = Number.parseFloat(headers.get("retry-after-ms") ?? "");
  if (Number.isFinite(ms) && ms >= 0) return Math.round(ms);
  const value = headers.get("retry-after");
  if (value === null || value.trim() === "") return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds) && seconds >= 0) return Math.round(seconds * 1000);
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}
