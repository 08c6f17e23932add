import type { ApiRoute } from "@moniro/api";
import type { RequestHandler } from "express";
import { type FieldProblem, invalidRequest, unknownKeyMessage } from "./validate.js";

interface RouteQuery {
  method: string;
  path: RegExp;
  /** The query parameters the route takes (its `query` schema's keys). */
  takes: readonly string[];
}

const escaped = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** An express path (`/v1/agents/:agent`) as express matches it: any case, an optional trailing slash. */
function pathPattern(path: string): RegExp {
  const segments = path.split("/").map((segment) => (segment.startsWith(":") ? "[^/]+" : escaped(segment)));
  return new RegExp(`^${segments.join("/")}/?$`, "i");
}

/**
 * The one rule for query parameters (docs/api.md "Query parameters"): a
 * request to a route of `routes` may carry only the parameters its @moniro/api
 * `query` schema names, each once. Anything else is a 400 `invalid_query`
 * naming the parameter, the closest one the route takes (a typo like
 * `?limt=5`) and all it takes, or saying it takes none. The route's own schema
 * then checks the values. A path no route of `routes` matches passes on (404,
 * 405 and the other routes are answered after).
 */
export function knownQueryParameters(routes: readonly ApiRoute[]): RequestHandler {
  const table: RouteQuery[] = routes.map((route) => ({
    method: route.method.toUpperCase(),
    path: pathPattern(route.path),
    takes: Object.keys(route.query?.shape ?? {}),
  }));
  return (request, _response, next) => {
    if (!request.url.includes("?")) return next();
    const method = request.method === "HEAD" ? "GET" : request.method;
    const matched = table.filter((route) => route.method === method && route.path.test(request.path));
    if (matched.length === 0) return next();
    const takes = [...new Set(matched.flatMap((route) => route.takes))];
    const problems: FieldProblem[] = [];
    for (const [name, value] of Object.entries(request.query as Record<string, unknown>)) {
      if (!takes.includes(name)) {
        problems.push({ path: name === "" ? "''" : name, message: unknownKeyMessage(name, takes, "query") });
      } else if (Array.isArray(value)) {
        problems.push({ path: name, message: `is given more than once (${value.length} times); give it once` });
      }
    }
    next(problems.length > 0 ? invalidRequest("query", problems) : undefined);
  };
}
