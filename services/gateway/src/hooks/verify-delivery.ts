import { createHmac, timingSafeEqual } from "node:crypto";
import { HttpError } from "../http/http-error.js";
import type { HookAuth } from "./hook-catalog.js";

/** The headers authentication reads, lower-case as Node gives them. */
type Headers = Record<string, string | string[] | undefined>;

function header(headers: Headers, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}

function sameBytes(given: Buffer, expected: Buffer): boolean {
  return given.length === expected.length && timingSafeEqual(given, expected);
}

function refuse(hook: string, message: string, challenge?: string): HttpError {
  return new HttpError(
    401,
    "unauthorized",
    `webhook '${hook}': ${message}`,
    challenge ? { "WWW-Authenticate": challenge } : {},
  );
}

/** `sha256=<64 hex>` → the digest bytes, or undefined when the header is not of that form. */
function digestOf(value: string | undefined): Buffer | undefined {
  const match = /^sha256=([0-9a-fA-F]{64})$/.exec(value?.trim() ?? "");
  return match?.[1] ? Buffer.from(match[1], "hex") : undefined;
}

function hmac(secret: string, ...parts: (string | Buffer)[]): Buffer {
  const mac = createHmac("sha256", secret);
  for (const part of parts) mac.update(part);
  return mac.digest();
}

/**
 * Checks that a delivery comes from whoever holds the hook's secret; throws a
 * 401 HttpError that says what is missing or wrong (never what was expected).
 * `body` is the raw request body, exactly as signed. `nowMs` is the gateway's clock.
 */
export function verifyDelivery(
  hook: string,
  auth: HookAuth,
  request: { headers: Headers; body: Buffer },
  nowMs: number,
): void {
  const { headers, body } = request;
  switch (auth.kind) {
    case "none":
      return;
    case "bearer": {
      const match = /^Bearer\s+(\S+)\s*$/i.exec(header(headers, "authorization") ?? "");
      if (!match?.[1]) {
        throw refuse(
          hook,
          "missing token: send 'Authorization: Bearer <the hook's token>'",
          'Bearer realm="moniro-hooks"',
        );
      }
      const given = createHmac("sha256", "moniro-hook-token").update(match[1]).digest();
      const expected = createHmac("sha256", "moniro-hook-token").update(auth.token).digest();
      if (!timingSafeEqual(given, expected)) {
        throw refuse(hook, "token not accepted", 'Bearer realm="moniro-hooks", error="invalid_token"');
      }
      return;
    }
    case "github": {
      const given = digestOf(header(headers, "x-hub-signature-256"));
      if (!given) {
        throw refuse(hook, "missing or malformed X-Hub-Signature-256: send 'sha256=<hex HMAC-SHA256 of the body>'");
      }
      if (!sameBytes(given, hmac(auth.secret, body))) {
        throw refuse(hook, "signature does not match the body: check the hook's secret");
      }
      return;
    }
    case "hmac": {
      const given = digestOf(header(headers, "x-webhook-signature"));
      if (!given) {
        throw refuse(
          hook,
          "missing or malformed X-Webhook-Signature: send 'sha256=<hex HMAC-SHA256 of \"<timestamp>.<body>\">'",
        );
      }
      const timestamp = header(headers, "x-webhook-timestamp")?.trim() ?? "";
      if (!/^\d{1,12}$/.test(timestamp)) {
        throw refuse(hook, "missing or malformed X-Webhook-Timestamp: send the signing time in Unix seconds");
      }
      // The signature is checked first, so a caller without the secret learns nothing about the clock.
      if (!sameBytes(given, hmac(auth.secret, `${timestamp}.`, body))) {
        throw refuse(hook, "signature does not match the timestamp and body: check the hook's secret");
      }
      const skewS = Math.abs(nowMs / 1000 - Number(timestamp));
      if (skewS > auth.toleranceS) {
        throw refuse(
          hook,
          `X-Webhook-Timestamp is ${Math.round(skewS)} s from the gateway's clock, outside the ${auth.toleranceS} s window: a replayed or delayed delivery is refused; sign with the current time`,
        );
      }
      return;
    }
  }
}
