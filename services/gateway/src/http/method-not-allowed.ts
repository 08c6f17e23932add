import type { RequestHandler } from "express";
import { HttpError } from "./http-error.js";

/** For a route's other methods: 405 with `Allow` listing the ones it answers. */
export function methodNotAllowed(...allowed: string[]): RequestHandler {
  const allow = allowed.includes("GET") ? [...allowed, "HEAD"] : allowed;
  return (request, _response, next) => {
    next(
      new HttpError(
        405,
        "method_not_allowed",
        `${request.method} is not allowed on ${request.path}; use ${allow.join(" or ")}`,
        { Allow: allow.join(", ") },
      ),
    );
  };
}
