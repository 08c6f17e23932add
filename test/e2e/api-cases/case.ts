import type { FakeSignalCli } from "@moniro/signal-bridge/test";
import type { JetStreamClient } from "@nats-io/jetstream";
import { expect } from "vitest";
import type { Stack } from "../../support/stack.js";

/** What a case can use: the running stack's gateway (with a bearer key) and its NATS. */
export interface CaseContext {
  /** A request with the gateway's key; `body` is sent as JSON. */
  call(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<Response>;
  /** A request without any key. */
  anonymous(method: string, path: string): Promise<Response>;
  /** The stack's subject namespace (`<ns>.in.<agent>`, …). */
  namespace: string;
  js: JetStreamClient;
  /**
   * Agents defined in the stack: `ada` (with a definition schedule) and `bob`,
   * run by the stack's agent-runner on the fake model, which answers "ok".
   */
  agents: readonly string[];
  /** Values a case leaves for a later one (a sequence, an id), by name. */
  memo: Map<string, unknown>;
  /** The stack itself (to start one more service, e.g. a gateway whose NATS and Redis are unreachable). */
  stack: Stack;
  /** The fake signal-cli daemon the stack's signal-bridge talks to (every sender is a stranger: pairing). */
  signal: FakeSignalCli;
}

/**
 * The URL of a second gateway (open, loopback) whose NATS and Redis do not
 * answer, started once per stack: its /readyz is 503 and its routes answer
 * `nats_unavailable` / `redis_unavailable`.
 */
export async function unreachableGateway(context: CaseContext): Promise<string> {
  const known = context.memo.get("unreachableGateway");
  if (typeof known === "string") return known;
  const service = await context.stack.start(
    "gateway",
    { MONIRO_NATS_URL: "nats://127.0.0.1:1", MONIRO_REDIS_URL: "redis://127.0.0.1:1", MONIRO_GATEWAY_OPEN: "true" },
    { waitReady: false },
  );
  const url = `http://127.0.0.1:${service.port}`;
  for (let attempt = 0; ; attempt++) {
    const answered = await fetch(`${url}/healthz`).then(
      (response) => response.ok,
      () => false,
    );
    if (answered) break;
    if (attempt > 400)
      throw new Error(`the gateway without NATS and Redis never listened:\n${service.output.join("")}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  context.memo.set("unreachableGateway", url);
  return url;
}

/**
 * One real request of the conformance test: what it shows, the status it
 * must get, and optionally more checks of the body (which the test always
 * validates against docs/openapi.json). Cases of one route run in order, on one stack.
 */
export interface ApiCase {
  what: string;
  status: number;
  send(context: CaseContext): Promise<Response>;
  check?(body: unknown, context: CaseContext): void | Promise<void>;
}

/** Cases by route id (operationId): every route of ALL_ROUTES needs a success and, if it documents one, an error. */
export type CaseTable = Record<string, readonly ApiCase[]>;

/** A check: the body is a 400 `invalid_body` listing `fields` (`path: message; …`), each in `details.fields` too. */
export const invalidBody =
  (...fields: Array<[path: string, message: string]>) =>
  (body: unknown): void =>
    expect(body).toEqual({
      error: {
        code: "invalid_body",
        message: fields.map(([path, message]) => `${path}: ${message}`).join("; "),
        details: { fields: fields.map(([path, message]) => ({ path, message })) },
      },
    });
