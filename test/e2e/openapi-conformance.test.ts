import { ALL_ROUTES, type ApiRoute, openApiPath } from "@moniro/api";
import { type FakeSignalCli, startFakeSignalCli } from "@moniro/signal-bridge/test";
import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testAgentYaml } from "../support/agents.js";
import { type Model, textReply } from "../support/model-script.js";
import { startModelStack } from "../support/model-stack.js";
import { type OpenApiDocumentJson, openApiValidator } from "../support/openapi-validator.js";
import { NATS_URL, printServiceLogsOnFailure, type Stack } from "../support/stack.js";
import { adminCases } from "./api-cases/admin.js";
import { agentsCases } from "./api-cases/agents.js";
import type { ApiCase, CaseContext, CaseTable } from "./api-cases/case.js";
import { contextCases } from "./api-cases/context.js";
import { coreCases } from "./api-cases/core.js";
import { CONFORMANCE_HOOK, hooksCases } from "./api-cases/hooks.js";
import { sendCases } from "./api-cases/send.js";
import { CONFORMANCE_WORKFLOW, workflowsCases } from "./api-cases/workflows.js";

// Issue 13, "A test checks every route's real responses against the
// document": a real gateway (with a bearer key), scheduler, agent-runner
// (its agents on the fake model, which answers "ok") and signal-bridge (on the
// fake signal-cli, for pairing) over real NATS and Redis; every route of ALL_ROUTES gets its cases (api-cases/, by route
// id), and every real answer is checked against the OpenAPI document the
// gateway serves (docs/openapi.json): a documented status, a body matching
// its schema (ajv, JSON Schema 2020-12).

const CASES: CaseTable = {
  ...coreCases,
  ...agentsCases,
  ...contextCases,
  ...adminCases,
  ...workflowsCases,
  ...sendCases,
  ...hooksCases,
};
const KEY = "conformance-key";

/** Path parameters of the generated cases: names the stack has (an unknown one would do: the query is checked first). */
const SAMPLE_PARAMS: Record<string, string> = { agent: "ada", workflow: "pair", tag: "conf", name: CONFORMANCE_HOOK };

/**
 * Every route's last case (docs/api.md "Query parameters"): a query parameter
 * it does not take — a typo of `limit` — is a 400 `invalid_query` naming it
 * and the parameters the route takes (or that it takes none), before the
 * route does anything (`DELETE /v1/agents/ada?limt=5` deletes nothing).
 */
function unknownQueryCase(route: ApiRoute): ApiCase {
  const path = route.path.replace(/:([A-Za-z_]\w*)/g, (_, name: string) => SAMPLE_PARAMS[name] ?? "x");
  const takes = Object.keys(route.query?.shape ?? {});
  return {
    what: `an unknown query parameter (${path}?limt=5)`,
    status: 400,
    send: (context) => context.call(route.method.toUpperCase(), `${path}?limt=5`),
    check(body) {
      const { error } = body as { error: { code: string; message: string; details: unknown } };
      expect(error.code).toBe("invalid_query");
      expect(error.message).toMatch(/^limt: unknown query parameter; /);
      expect(error.message).toContain(
        takes.length > 0 ? `allowed: ${takes.join(", ")}` : "this route takes none: remove it",
      );
      expect(error.details).toEqual({ fields: [{ path: "limt", message: error.message.slice("limt: ".length) }] });
    },
  };
}

async function bodyOf(response: Response): Promise<unknown> {
  const type = response.headers.get("content-type") ?? "";
  if (type.startsWith("text/event-stream")) {
    await response.body?.cancel();
    return undefined;
  }
  const text = await response.text();
  if (!type.startsWith("application/json")) return text;
  return text === "" ? undefined : JSON.parse(text);
}

describe("every route's cases are there", () => {
  it("each route of ALL_ROUTES has a success case and, when it documents an error, an error case", () => {
    const missing: string[] = [];
    for (const route of ALL_ROUTES) {
      const cases = CASES[route.id] ?? [];
      if (!cases.some((c) => c.status < 400)) missing.push(`${route.id}: no success case`);
      const documentsErrors = Object.keys(route.responses).some((status) => Number(status) >= 400);
      if (documentsErrors && !cases.some((c) => c.status >= 400)) missing.push(`${route.id}: no error case`);
    }
    expect(missing, "add cases in test/e2e/api-cases/<area>.ts").toEqual([]);
    const known = new Set(ALL_ROUTES.map((route) => route.id));
    expect(
      Object.keys(CASES).filter((id) => !known.has(id)),
      "cases of routes not in ALL_ROUTES",
    ).toEqual([]);
  });
});

describe("OpenAPI conformance: real answers of a running gateway match docs/openapi.json", () => {
  let stack: Stack;
  let model: Model;
  let nc: NatsConnection;
  let signal: FakeSignalCli;
  let context: CaseContext;
  let validator: ReturnType<typeof openApiValidator>;
  printServiceLogsOnFailure(() => stack);

  beforeAll(async () => {
    ({ model, stack } = await startModelStack({
      services: ["scheduler", "agent-runner"],
      agents: {
        ada: testAgentYaml("ada", { extra: { schedule: { every_ms: 3_600_000, reason: "morning review" } } }),
        bob: testAgentYaml("bob", { extra: { webhooks: { [CONFORMANCE_HOOK]: { auth: "none" } } } }),
      },
      workflows: { pair: CONFORMANCE_WORKFLOW },
    }));
    for (const agent of ["ada", "bob"]) for (let i = 0; i < 50; i++) model.script(agent, textReply("ok"));
    signal = await startFakeSignalCli({ keepaliveMs: 200 });
    await stack.start("signal-bridge", {
      MONIRO_SIGNAL_URL: signal.url,
      MONIRO_SIGNAL_ACCOUNT: signal.account,
      MONIRO_SIGNAL_DEFAULT_AGENT: "ada",
    });
    await stack.start("gateway", { MONIRO_GATEWAY_OPEN: "false", MONIRO_API_KEYS: KEY });
    nc = await connect({ servers: NATS_URL, name: "conformance-test" });
    const base = stack.gatewayUrl;
    context = {
      call: (method, path, body, headers = {}) =>
        fetch(`${base}${path}`, {
          method,
          headers: {
            authorization: `Bearer ${KEY}`,
            ...(body !== undefined ? { "content-type": "application/json" } : {}),
            ...headers,
          },
          ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
        }),
      anonymous: (method, path) => fetch(`${base}${path}`, { method }),
      namespace: stack.namespace,
      js: jetstream(nc),
      agents: ["ada", "bob"],
      memo: new Map(),
      stack,
      signal,
    };
    const served = await fetch(`${base}/v1/openapi.json`);
    validator = openApiValidator((await served.json()) as OpenApiDocumentJson);
    // The scheduler reconciles the definitions' schedules in the background: wait for ada's wakeup.
    for (let attempt = 0; attempt < 100; attempt++) {
      const listed = (await (await context.call("GET", "/v1/schedules?agent=ada")).json()) as { schedules?: unknown[] };
      if ((listed.schedules ?? []).length > 0) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  });

  afterAll(async () => {
    await stack?.stop();
    if (nc) {
      // The signal-bridge's pairing bucket is no stream of the stack's own.
      const jsm = await jetstreamManager(nc);
      await jsm.streams.delete(`KV_${stack.namespace}_signal_pairing`).catch(() => undefined);
      await nc.drain();
    }
    await model?.close();
    await signal?.close();
  });

  for (const route of ALL_ROUTES) {
    const path = openApiPath(route.path);
    it(`${route.id}: ${route.method.toUpperCase()} ${route.path}`, async () => {
      const cases: readonly ApiCase[] = CASES[route.id] ?? [];
      expect(cases.length, `no cases for ${route.id}`).toBeGreaterThan(0);
      const problems: string[] = [];
      for (const c of [...cases, unknownQueryCase(route)]) {
        const response = await c.send(context);
        const body = await bodyOf(response);
        const found = validator.check(path, route.method, {
          status: response.status,
          contentType: response.headers.get("content-type") ?? "",
          body,
        });
        if (response.status !== c.status) found.unshift(`status ${response.status}, expected ${c.status}`);
        problems.push(...found.map((problem) => `${c.what}: ${problem} — ${JSON.stringify(body)?.slice(0, 300)}`));
        if (found.length === 0) await c.check?.(body, context);
      }
      expect(problems).toEqual([]);
    });
  }
});
