import { getOpenApi, openApiJson } from "@moniro/api";
import { Router } from "express";
import { methodNotAllowed } from "../http/method-not-allowed.js";

/** `GET /v1/openapi.json`: the OpenAPI 3.1 document (docs/openapi.json), public like /healthz. */
export function openApiRouter(): Router {
  const document = openApiJson();
  const router = Router();
  router.get(getOpenApi.path, (_request, response) => {
    response.status(200).type("application/json").send(document);
  });
  router.all(getOpenApi.path, methodNotAllowed("GET"));
  return router;
}
