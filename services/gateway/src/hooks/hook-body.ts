import { isUtf8 } from "node:buffer";
import { parseJson } from "@moniro/envelopes";
import express, { type Request, type Response } from "express";
import { HttpError } from "../http/http-error.js";

/**
 * A hook's raw body, read whatever its Content-Type (the signature covers the
 * exact bytes, so nothing is parsed before it is checked). Compressed bodies
 * are refused: providers send webhooks uncompressed, and a signature over
 * compressed bytes would not be the one they documented.
 */
export function rawHookBody(limitBytes: number): (request: Request, response: Response) => Promise<Buffer> {
  const parser = express.raw({ type: () => true, limit: limitBytes, inflate: false });
  return (request, response) =>
    new Promise((resolve, reject) => {
      parser(request, response, (error?: unknown) => {
        if (error === undefined || error === null) {
          resolve(Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0));
          return;
        }
        const type = (error as { type?: string }).type;
        if (type === "entity.too.large") {
          reject(
            new HttpError(
              413,
              "body_too_large",
              `webhook body is larger than the limit of ${limitBytes} bytes (MONIRO_GATEWAY_HOOK_BODY_LIMIT); send less, or raise the limit`,
            ),
          );
          return;
        }
        if (type === "encoding.unsupported") {
          reject(
            new HttpError(
              415,
              "unsupported_media_type",
              "webhook bodies are read uncompressed: send them without Content-Encoding",
            ),
          );
          return;
        }
        reject(error);
      });
    });
}

const FIX =
  "send 'Content-Type: application/json', or 'application/x-www-form-urlencoded' with the JSON in a 'payload' field";

/**
 * The payload of a verified body: JSON (`application/json` or any
 * `application/*+json`), or a form (`application/x-www-form-urlencoded`)
 * whose `payload` field holds JSON, as GitHub sends it; a form without one
 * becomes an object of its fields. An empty body has no payload (undefined).
 */
export function hookPayload(contentType: string | undefined, body: Buffer): unknown {
  if (body.length === 0) return undefined;
  const type = (contentType ?? "").split(";")[0]?.trim().toLowerCase() ?? "";
  if (type === "application/json" || /^application\/[a-z0-9.+-]+\+json$/.test(type)) {
    const parsed = parseJson(body);
    if (!parsed.ok) throw new HttpError(400, "bad_json", `webhook body is not valid JSON (${parsed.error.message})`);
    return parsed.value;
  }
  if (type === "application/x-www-form-urlencoded") {
    if (!isUtf8(body)) throw new HttpError(400, "bad_encoding", "webhook form body is not valid UTF-8");
    const fields = new URLSearchParams(body.toString("utf8"));
    const payload = fields.get("payload");
    if (payload === null) return Object.fromEntries(fields);
    const parsed = parseJson(payload);
    if (!parsed.ok) {
      throw new HttpError(400, "bad_json", `the form field 'payload' is not valid JSON (${parsed.error.message})`);
    }
    return parsed.value;
  }
  throw new HttpError(
    415,
    "unsupported_media_type",
    `Content-Type '${(contentType ?? "(none)").slice(0, 100)}' is not accepted for a webhook; ${FIX}`,
  );
}
