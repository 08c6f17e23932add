import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { ALL_ROUTES } from "@moniro/api";
import { describe, expect, it } from "vitest";

// Issue 13, "Docs": docs/api.md lists every route of the HTTP API
// (ALL_ROUTES of @moniro/api, which the gateway serves and the OpenAPI
// document describes) as `METHOD /path`.

const API_MD = readFileSync(join(resolve(import.meta.dirname, "..", ".."), "docs", "api.md"), "utf8");

describe("docs/api.md", () => {
  it("names every route of ALL_ROUTES as `METHOD /path`", () => {
    const missing = ALL_ROUTES.map((route) => `${route.method.toUpperCase()} ${route.path}`).filter(
      (route) => !API_MD.includes(route),
    );
    expect(missing).toEqual([]);
  });
});
