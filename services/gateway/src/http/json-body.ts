import { isUtf8 } from "node:buffer";
import express, { type RequestHandler } from "express";
import { HttpError } from "./http-error.js";

const FIX = "send the body as JSON with 'Content-Type: application/json'";

/** Whether the request carries body bytes (a chunked body, or a non-zero Content-Length). */
function hasBody(headers: { "transfer-encoding"?: string; "content-length"?: string }): boolean {
  if (headers["transfer-encoding"] !== undefined) return true;
  const length = headers["content-length"];
  return length !== undefined && length !== "0";
}

/**
 * POST bodies are `application/json` in UTF-8, nothing else: a web page on
 * another origin can send `text/plain` or a form without a CORS preflight, so
 * no other type is ever read. A POST without a body (`/pause`) needs no type.
 */
function requireJson(): RequestHandler {
  return (request, _response, next) => {
    if (request.method !== "POST") return next();
    const contentType = request.get("content-type");
    if (contentType === undefined) {
      if (!hasBody(request.headers)) return next();
      return next(new HttpError(415, "unsupported_media_type", `the request body has no Content-Type; ${FIX}`));
    }
    if (!request.is("application/json")) {
      return next(
        new HttpError(
          415,
          "unsupported_media_type",
          `Content-Type '${contentType.slice(0, 100)}' is not accepted: POST bodies must be JSON; ${FIX}`,
          {},
          { contentType: contentType.slice(0, 100) },
        ),
      );
    }
    const charset = /;\s*charset\s*=\s*"?([^";\s]*)/i.exec(contentType)?.[1]?.toLowerCase();
    if (charset !== undefined && charset !== "utf-8" && charset !== "utf8") {
      return next(
        new HttpError(
          415,
          "unsupported_media_type",
          `charset '${charset.slice(0, 40)}' is not accepted: JSON bodies are UTF-8; send 'Content-Type: application/json' or 'application/json; charset=utf-8'`,
        ),
      );
    }
    next();
  };
}

/** Bytes that are not UTF-8 are refused, never decoded with replacement characters into what the agent reads. */
function verifyUtf8(_request: unknown, _response: unknown, body: Buffer): void {
  if (!isUtf8(body)) throw notUtf8();
}

/** The 415 of a body that is not UTF-8 (shared with the fast message path). */
export function notUtf8(): HttpError {
  return new HttpError(
    415,
    "unsupported_media_type",
    "request body is not valid UTF-8; encode the JSON as UTF-8 (after decompression, if Content-Encoding is set)",
  );
}

/** The JSON body pipeline of `/v1`: the type check, then the parser (size limit, gzip/deflate/br, UTF-8). */
export function jsonBody(options: { limitBytes: number }): RequestHandler[] {
  return [
    requireJson(),
    express.json({ limit: options.limitBytes, strict: false, type: "application/json", verify: verifyUtf8 }),
  ];
}
