import type { IncomingMessage, ServerResponse } from "node:http";
import type { Registry } from "prom-client";

/**
 * A readiness check: resolves (or returns `true`/nothing) when fine; throws,
 * rejects or returns a string to fail, the message or string being the reason.
 */
// biome-ignore lint/suspicious/noConfusingVoidType: `async () => {}` (Promise<void>) is the usual check
export type ReadinessCheck = () => Promise<void | true | string> | void | true | string;

export interface Readiness {
  ready: boolean;
  /** Every check: `"ok"` or why it fails. */
  checks: Record<string, string>;
  /** The failing checks only, with their reasons (e.g. `{ nats: "not connected" }`). */
  failures: Record<string, string>;
}

const PROMETHEUS_TEXT = "text/plain; version=0.0.4; charset=utf-8";

/** How long one check may take before it counts as failing. */
export const CHECK_TIMEOUT_MS = 2_000;

/** Runs every check in parallel (each bounded by CHECK_TIMEOUT_MS). */
export async function readiness(checks: Record<string, ReadinessCheck>): Promise<Readiness> {
  const results = await Promise.all(
    Object.entries(checks).map(async ([name, check]) => [name, await runCheck(name, check)] as const),
  );
  const failures = Object.fromEntries(results.filter(([, result]) => result !== "ok"));
  return { ready: Object.keys(failures).length === 0, checks: Object.fromEntries(results), failures };
}

async function runCheck(name: string, check: ReadinessCheck): Promise<string> {
  let timer: NodeJS.Timeout | undefined;
  try {
    const result = await Promise.race([
      Promise.resolve().then(check),
      new Promise<never>((_resolve, reject) => {
        timer = setTimeout(
          () => reject(new Error(`${name} check gave no answer within ${CHECK_TIMEOUT_MS} ms`)),
          CHECK_TIMEOUT_MS,
        );
      }),
    ]);
    return typeof result === "string" ? result || "failed" : "ok";
  } catch (error) {
    return (error as Error)?.message || String(error);
  } finally {
    clearTimeout(timer);
  }
}

/** What /metrics serves: a registry, or a function giving the Prometheus text (several registries, or text rendered elsewhere). */
export type MetricsSource = Registry | (() => Promise<string> | string);

export type OpsHandler = (request: IncomingMessage, response: ServerResponse) => void;

export interface OpsHandlers {
  /** 200 while the process runs. */
  healthz: OpsHandler;
  /** 200 `{ ready: true, checks }`, or 503 `{ ready: false, checks, failures }`. */
  readyz: OpsHandler;
  /** Prometheus text of the registry (empty without one). */
  metrics: OpsHandler;
}

function json(response: ServerResponse, status: number, body: unknown): void {
  response.writeHead(status, { "content-type": "application/json" });
  response.end(JSON.stringify(body));
}

/**
 * The ops endpoints as plain node:http handlers; express accepts them as they
 * are (`app.get("/readyz", handlers.readyz)`), which is how the gateway serves
 * them on its API port.
 */
export function createOpsHandlers(options: {
  checks: Record<string, ReadinessCheck>;
  metrics?: MetricsSource | undefined;
}): OpsHandlers {
  return {
    healthz: (_request, response) => json(response, 200, { ok: true }),
    readyz: (_request, response) => {
      readiness(options.checks).then(
        (result) => json(response, result.ready ? 200 : 503, { ok: result.ready, ...result }),
        (error: unknown) => json(response, 500, { ok: false, ready: false, error: String(error) }),
      );
    },
    metrics: (_request, response) => {
      const source = options.metrics;
      const contentType = source && typeof source !== "function" ? source.contentType : PROMETHEUS_TEXT;
      const render = async () => (!source ? "" : typeof source === "function" ? source() : source.metrics());
      render().then(
        (text) => response.writeHead(200, { "content-type": contentType }).end(text),
        (error: unknown) =>
          response
            .writeHead(500, { "content-type": "text/plain" })
            .end(`# metrics failed: ${(error as Error)?.message}\n`),
      );
    },
  };
}
