import { adminRoutes } from "./admin.js";
import { agentsRoutes } from "./agents.js";
import { contextRoutes } from "./context.js";
import { coreRoutes } from "./core.js";
import { hooksRoutes } from "./hooks.js";
import { renderOpenApi } from "./openapi.js";
import type { ApiRoute } from "./route.js";
import { sendRoutes } from "./send.js";
import { workflowsRoutes } from "./workflows.js";

export * from "./admin.js";
export * from "./agents.js";
export * from "./context.js";
export * from "./core.js";
export * from "./error-body.js";
export * from "./hooks.js";
export * from "./openapi.js";
export * from "./route.js";
export * from "./send.js";
export * from "./workflows.js";

/** Every route of the HTTP API, in document order. */
export const ALL_ROUTES: readonly ApiRoute[] = [
  ...coreRoutes,
  ...agentsRoutes,
  ...contextRoutes,
  ...adminRoutes,
  ...workflowsRoutes,
  ...sendRoutes,
  ...hooksRoutes,
];

/** docs/openapi.json, as `GET /v1/openapi.json` serves it: the document of ALL_ROUTES. */
export function openApiJson(): string {
  return renderOpenApi(ALL_ROUTES);
}
