import type { RequestHandler } from "express";

/** Express matches paths case-insensitively: `/V1/Agents/…` reaches the agent routes too. */
const AGENT_PATH = /^\/v1\/agents\//i;

/**
 * Runs `handler` (a router that serves no `/v1/agents/…` path: health,
 * OpenAPI, webhooks) for every request except those under `/v1/agents/`,
 * which pass straight on. Every DM is a `POST /v1/agents/:agent/messages`;
 * walking a router's layers to find nothing is a measurable part of its cost.
 */
export function exceptAgentPaths(handler: RequestHandler): RequestHandler {
  return (request, response, next) => {
    if (AGENT_PATH.test(request.url)) return next();
    return handler(request, response, next);
  };
}
