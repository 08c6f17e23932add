import type { ErrorRequestHandler, Response } from "express";

/** Machine-readable error codes of the HTTP API (docs/api.md lists them). */
export type ErrorCode =
  | "bad_json"
  | "invalid_body"
  | "invalid_query"
  | "body_too_large"
  | "unsupported_media_type"
  | "unauthorized"
  | "unknown_agent"
  | "not_found"
  | "nats_unavailable"
  | "runner_unavailable"
  | "redis_unavailable"
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

export function sendError(response: Response, error: HttpError): void {
  for (const [name, value] of Object.entries(error.headers)) response.setHeader(name, value);
  response.status(error.status).json({
    error: { code: error.code, message: error.message, ...(error.details ? { details: error.details } : {}) },
  });
}

/** body-parser's errors carry `type`; they become the API's own. */
function fromBodyParser(error: { type?: string; limit?: number; message?: string }): HttpError | undefined {
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
    return new HttpError(415, "unsupported_media_type", `${error.message ?? "unsupported encoding"}; send UTF-8 JSON`);
  }
  return undefined;
}

/** The last middleware: every error becomes a JSON body; unexpected ones are logged and answered 500. */
export function errorHandler(onUnexpected: (error: unknown) => void): ErrorRequestHandler {
  return (error: unknown, _request, response, _next) => {
    if (response.headersSent) {
      response.end();
      return;
    }
    if (error instanceof HttpError) return sendError(response, error);
    const parsed = fromBodyParser(error as { type?: string });
    if (parsed) return sendError(response, parsed);
    onUnexpected(error);
    sendError(response, new HttpError(500, "internal", "internal error; the gateway log has the details"));
  };
}
