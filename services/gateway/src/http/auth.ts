import { timingSafeEqual } from "node:crypto";
import type { RequestHandler } from "express";
import { HttpError } from "./http-error.js";

const CHALLENGE = { "WWW-Authenticate": 'Bearer realm="moniro"' };

function sameKey(given: string, key: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(key);
  return a.length === b.length && timingSafeEqual(a, b);
}

/**
 * Bearer API keys (`Authorization: Bearer <key>`). With `open`, every request
 * passes (local development); otherwise a missing or unknown key is a 401
 * with a `WWW-Authenticate: Bearer` challenge.
 */
export function bearerAuth(options: { keys: readonly string[]; open: boolean }): RequestHandler {
  return (request, _response, next) => next(authRefusal(request.headers.authorization, options));
}

/** Why a request with this `Authorization` header is refused (401), or undefined when it may pass. */
export function authRefusal(
  header: string | undefined,
  options: { keys: readonly string[]; open: boolean },
): HttpError | undefined {
  if (options.open) return undefined;
  if (!header) {
    return new HttpError(
      401,
      "unauthorized",
      "missing API key: send 'Authorization: Bearer <key>' with one of the keys in MONIRO_API_KEYS",
      CHALLENGE,
    );
  }
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  if (!match?.[1]) {
    return new HttpError(401, "unauthorized", "malformed Authorization header: use 'Authorization: Bearer <key>'", {
      "WWW-Authenticate": 'Bearer realm="moniro", error="invalid_request"',
    });
  }
  const given = match[1];
  if (!options.keys.some((key) => sameKey(given, key))) {
    return new HttpError(401, "unauthorized", "API key not accepted: it is not one of the keys in MONIRO_API_KEYS", {
      "WWW-Authenticate": 'Bearer realm="moniro", error="invalid_token"',
    });
  }
  return undefined;
}
