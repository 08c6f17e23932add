import type { ApiRoute } from "./route.js";

/** Routes of this area (see README.md for which area holds what). */
export const workflowsRoutes: readonly ApiRoute[] = [];
