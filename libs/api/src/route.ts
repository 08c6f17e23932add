import type { z } from "zod";

/** How one answer of a route looks: its JSON body schema, or an SSE stream. */
export interface ApiResponse {
  description: string;
  /** The JSON body; absent for an SSE stream or an empty answer. */
  schema?: z.ZodType;
  /** Defaults to application/json. */
  contentType?: "application/json" | "text/event-stream" | "text/plain";
}

/**
 * One route of the HTTP API, described once: the gateway validates with these
 * schemas, @moniro/client infers its types from them, and the OpenAPI document
 * (docs/openapi.json, /v1/openapi.json) is generated from them.
 */
export interface ApiRoute {
  /** operationId, e.g. `listAgents`; also the client's method name. */
  id: string;
  method: "get" | "post" | "put" | "patch" | "delete";
  /** Express-style path, e.g. `/v1/agents/:agent`. */
  path: string;
  summary: string;
  /** A route without a bearer key (health, readiness, metrics, webhooks, the OpenAPI document). */
  public?: boolean;
  params?: z.ZodObject;
  query?: z.ZodObject;
  body?: z.ZodType;
  /** Every status the route answers with, errors included (errors use `errorBodySchema`). */
  responses: Record<number, ApiResponse>;
}

/** Keeps the literal types of a route, so clients infer params, body and answers. */
export const defineRoute = <const T extends ApiRoute>(route: T): T => route;
