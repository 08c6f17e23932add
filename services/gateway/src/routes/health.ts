import { createOpsHandlers, type ReadinessCheck, type Registry } from "@moniro/telemetry";
import { Router } from "express";
import { methodNotAllowed } from "../http/method-not-allowed.js";

/**
 * `/healthz` (the process answers), `/readyz` (NATS and Redis answer; 503
 * naming each failing one under `failures`) and `/metrics` (Prometheus), on
 * the API port, with the handlers every service uses (@moniro/telemetry).
 */
export function healthRouter(deps: { readiness: Record<string, ReadinessCheck>; registry: Registry }): Router {
  const handlers = createOpsHandlers({ checks: deps.readiness, metrics: deps.registry });
  const router = Router();
  router.get("/healthz", handlers.healthz);
  router.get("/readyz", handlers.readyz);
  router.get("/metrics", handlers.metrics);
  for (const path of ["/healthz", "/readyz", "/metrics"]) router.all(path, methodNotAllowed("GET"));
  return router;
}
