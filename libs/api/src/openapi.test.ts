import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { describeDifference } from "./document-diff.js";
import { errorBodySchema } from "./error-body.js";
import { ALL_ROUTES, openApiJson } from "./index.js";
import { documentedResponses, openApiDocument, openApiPath } from "./openapi.js";
import { type ApiRoute, defineRoute } from "./route.js";

const sample = [
  defineRoute({
    id: "getThing",
    method: "get",
    path: "/v1/things/:thing/parts/:part_id",
    summary: "one part",
    params: z.object({ thing: z.string(), part_id: z.string() }),
    query: z.object({ limit: z.coerce.number().int().optional() }),
    responses: {
      200: { description: "the part", schema: z.object({ name: z.string() }) },
      404: { description: "none", schema: errorBodySchema },
    },
  }),
  defineRoute({
    id: "watchThings",
    method: "get",
    path: "/v1/things/events",
    summary: "events",
    public: true,
    responses: { 200: { description: "stream", contentType: "text/event-stream" } },
  }),
  defineRoute({
    id: "addThing",
    method: "post",
    path: "/v1/things",
    summary: "add",
    body: z.object({ name: z.string().min(1) }),
    responses: { 201: { description: "added", schema: z.object({ name: z.string() }) } },
  }),
];

describe("openApiDocument", () => {
  const document = openApiDocument(sample);
  const part = document.paths?.["/v1/things/{thing}/parts/{part_id}"]?.get;

  it("turns express paths into OpenAPI paths, with path and query parameters", () => {
    expect(openApiPath("/v1/agents/:agent/schedules/:id")).toBe("/v1/agents/{agent}/schedules/{id}");
    expect(document.openapi).toBe("3.1.0");
    expect(part?.operationId).toBe("getThing");
    expect(part?.parameters?.map((p) => ("name" in p ? `${p.in}:${p.name}` : "ref"))).toEqual([
      "path:thing",
      "path:part_id",
      "query:limit",
    ]);
  });

  it("puts the bearer key on non-public routes, none on public ones, and adds 400, 401, 403 and 500", () => {
    expect(document.components?.securitySchemes?.bearerKey).toMatchObject({ type: "http", scheme: "bearer" });
    expect(part?.security).toEqual([{ bearerKey: [] }]);
    expect(Object.keys(part?.responses ?? {}).sort()).toEqual(["200", "400", "401", "403", "404", "500"]);
    const events = document.paths?.["/v1/things/events"]?.get;
    expect(events?.security).toEqual([]);
    expect(Object.keys(events?.responses ?? {}).sort()).toEqual(["200", "400", "403", "500"]);
  });

  it("documents every route's 400 for a query parameter it does not take, after the route's own 400", () => {
    expect(part?.responses?.["400"]?.description).toMatch(
      /^a query parameter the route does not take .*`invalid_query`/,
    );
    const add = documentedResponses({
      ...sample[2],
      responses: { 400: { description: "a bad name (`invalid_body`)", schema: errorBodySchema } },
    } as ApiRoute)[400];
    expect(add?.description).toMatch(/^a bad name \(`invalid_body`\); or a query parameter the route does not take/);
  });

  it("refers errors to the ErrorBody component and describes SSE as text/event-stream", () => {
    expect(part?.responses?.["404"]).toMatchObject({
      content: { "application/json": { schema: { $ref: "#/components/schemas/ErrorBody" } } },
    });
    expect(document.components?.schemas?.ErrorBody).toMatchObject({ required: ["error"] });
    expect(document.paths?.["/v1/things/events"]?.get?.responses?.["200"]).toMatchObject({
      content: { "text/event-stream": { schema: { type: "string" } } },
    });
    expect(document.paths?.["/v1/things"]?.post?.requestBody).toMatchObject({
      required: true,
      content: { "application/json": { schema: { required: ["name"] } } },
    });
  });

  it("is the same for the same routes, and docs/openapi.json is the document of ALL_ROUTES", () => {
    expect(JSON.stringify(openApiDocument(sample))).toBe(JSON.stringify(document));
    const committed = readFileSync(new URL("../../../docs/openapi.json", import.meta.url), "utf8");
    const generated = openApiJson();
    const stale = committed === generated ? "" : describeDifference(committed, generated);
    expect(stale, "docs/openapi.json is stale: run 'npm run openapi'").toBe("");
    const ids = ALL_ROUTES.map((route) => route.id);
    expect(new Set(ids).size, "route ids are operationIds and must be unique").toBe(ids.length);
  });
});

describe("describeDifference", () => {
  const doc = (paths: Record<string, unknown>) => JSON.stringify({ openapi: "3.1.0", paths }, null, 2);
  it("names missing, removed and changed operations, else the first differing line", () => {
    expect(describeDifference("", doc({}))).toBe("the file is missing");
    expect(
      describeDifference(
        doc({ "/a": { get: { summary: "a" } }, "/b": { get: {} } }),
        doc({ "/a": { get: { summary: "A" } }, "/c": { post: {} } }),
      ),
    ).toBe("missing POST /c; no longer in the API: GET /b; changed: GET /a");
    expect(describeDifference(`${doc({})} `, doc({}))).toBe('line 4: committed "} ", generated "}"');
  });
});
