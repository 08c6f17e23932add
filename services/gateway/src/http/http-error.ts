import type { IncomingMessage, ServerResponse } from "node:http";
import type { ErrorRequestHandler } from "express";
import { sendJson } from "./send-json.js";

/** Machine-readable error codes of the HTTP API (docs/api.md lists them). */
export type ErrorCode =
  | "bad_request"
  | "bad_json"
  | "bad_encoding"
  | "invalid_body"
  | "invalid_query"
  | "body_too_large"
  | "headers_too_large"
  | "request_timeout"
  | "unsupported_media_type"
  | "unauthorized"
  | "forbidden_origin"
  | "forbidden_host"
  | "unknown_agent"
  | "invalid_definition"
  | "revision_conflict"
  | "agent_exists"
  | "file_agent"
  | "unknown_hook"
  | "hook_unavailable"
  | "not_found"
  | "method_not_allowed"
  | "nats_unavailable"
  | "runner_unavailable"
  | "signal_bridge_unavailable"
  | "redis_unavailable"
  | "scheduler_unavailable"
  | "unknown_schedule"
  | "schedule_in_definition"
  | "unknown_dlq_entry"
  | "not_replayable"
  | "invalid_target"
  | "workflow_not_running"
  | "not_a_participant"
  | "post_too_large"
  | "unknown_workflow"
  | "invalid_workflow"
  | "unknown_instance"
  | "bad_tag"
  | "unresolved"
  | "unknown_variable"
  | "missing_variable"
  | "setup_failed"
  | "executor_unavailable"
  | "instance_busy"
  | "not_a_member"
  | "empty_post"
  | "workspace_running"
  | "bad_member"
  | "bad_instance"
  | "bad_cursor"
  | "internal";

/** An error the API reports as `{ error: { code, message } }` with `status`. */
export class HttpError extends Error {
  override readonly name = "HttpError";
  constructor(
    readonly status: number,
    readonly code: ErrorCode,
    message: string,
    readonly headers: Record<string, string> = {},
    readonly details?: Record<string, unknown>,
  ) {
    super(message);
  }
}

export function sendError(response: ServerResponse, error: HttpError): void {
  for (const [name, value] of Object.entries(error.headers)) response.setHeader(name, value);
  // What express's `response.status(…).json(…)` sends (send-json.ts), so a plain node:http response can answer too.
  sendJson(response, error.status, {
    error: { code: error.code, message: error.message, ...(error.details ? { details: error.details } : {}) },
  });
}

interface BodyParserError {
  type?: string;
  limit?: number;
  message?: string;
  status?: number;
  code?: string;
  expose?: boolean;
}

/** Errors of zlib's decompression streams carry `Z_…` (gzip, deflate) or `ERR__…` (br) codes. */
function isDecompressionError(error: BodyParserError): boolean {
  return typeof error.code === "string" && /^(Z_|ERR__)/.test(error.code);
}

/** body-parser's and the router's errors (http-errors with `status`, often `type`) become the API's own. */
export function fromParserError(error: BodyParserError, request: IncomingMessage): HttpError | undefined {
  if (error.type === "entity.parse.failed") {
    return new HttpError(
      400,
      "bad_json",
      `request body is not valid JSON (${error.message ?? "parse error"}); send a JSON object with content-type application/json`,
    );
  }
  if (error.type === "entity.too.large") {
    return new HttpError(
      413,
      "body_too_large",
      `request body is larger than the limit of ${error.limit} bytes (MONIRO_GATEWAY_BODY_LIMIT); send less text or link attachments by url`,
    );
  }
  if (error.type === "encoding.unsupported" || error.type === "charset.unsupported") {
    return new HttpError(
      415,
      "unsupported_media_type",
      `${error.message ?? "unsupported encoding"}; send UTF-8 JSON, uncompressed or with Content-Encoding gzip, deflate or br`,
    );
  }
  if (isDecompressionError(error)) {
    const encoding = request.headers["content-encoding"] ?? "its Content-Encoding";
    return new HttpError(
      400,
      "bad_encoding",
      `request body is not valid ${encoding} data (${error.message ?? error.code}); compress it correctly or send it without Content-Encoding`,
    );
  }
  if (typeof error.status === "number" && error.status >= 400 && error.status < 500 && error.expose !== false) {
    return new HttpError(error.status, "bad_request", `${error.message ?? "bad request"}; see docs/api.md`);
  }
  return undefined;
}

/**
 * Answers `error` as JSON: an HttpError or a body-parser error as its 4xx;
 * anything else is handed to `onUnexpected` and answered 500. Works on a plain
 * node:http request and response (the fast message path) as on express's.
 */
export function respondWithError(
  error: unknown,
  request: IncomingMessage,
  response: ServerResponse,
  onUnexpected: (error: unknown) => void,
): void {
  if (response.headersSent) {
    response.end();
    return;
  }
  const answer = error instanceof HttpError ? error : fromParserError((error ?? {}) as BodyParserError, request);
  if (answer) {
    sendError(response, answer);
    return;
  }
  onUnexpected(error);
  sendError(response, new HttpError(500, "internal", "internal error; the gateway log has the details"));
}

/** The last middleware: every error becomes a JSON body; unexpected ones are logged and answered 500. */
export function errorHandler(onUnexpected: (error: unknown) => void): ErrorRequestHandler {
  return (error: unknown, request, response, _next) => respondWithError(error, request, response, onUnexpected);
}
