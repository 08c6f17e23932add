import type { JetStreamClient } from "@nats-io/jetstream";

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
