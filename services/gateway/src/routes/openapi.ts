import { getOpenApi, openApiJson } from "@moniro/api";
import { Router } from "express";
import { methodNotAllowed } from "../http/method-not-allowed.js";

/**
 * `GET /v1/openapi.json`: the OpenAPI 3.1 document (docs/openapi.json), public like /healthz.
 * Rendered on its first request and kept: rendering converts every route's schemas to JSON
 * Schema, code and a ~220 KB document a gateway nobody asks for it would hold for its life.
 */
export function openApiRouter(): Router {
  let document: string | undefined;
  const router = Router();
  router.get(getOpenApi.path, (_request, response) => {
    document ??= openApiJson();
    response.status(200).type("application/json").send(document);
  });
  router.all(getOpenApi.path, methodNotAllowed("GET"));
  return router;
}
