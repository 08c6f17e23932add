import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { createOpsHandlers, type MetricsSource, type ReadinessCheck } from "./ops-handlers.js";

export interface OpsServer {
  /** The port it listens on (useful with port 0). */
  port: number;
  close(): Promise<void>;
}

export interface OpsServerOptions {
  port: number;
  host?: string;
  checks: Record<string, ReadinessCheck>;
  metrics?: MetricsSource | undefined;
}

/** A small HTTP server for /healthz, /readyz and /metrics (every service but the gateway). */
export async function startOpsServer(options: OpsServerOptions): Promise<OpsServer> {
  const handlers = createOpsHandlers(options);
  const routes: Record<string, (typeof handlers)["healthz"]> = {
    "/healthz": handlers.healthz,
    "/readyz": handlers.readyz,
    "/metrics": handlers.metrics,
  };
  const server: Server = createServer((request, response) => {
    const route = routes[(request.url ?? "/").split("?")[0] ?? "/"];
    if (request.method !== "GET" && request.method !== "HEAD") {
      response.writeHead(405, { "content-type": "application/json" }).end('{"error":"method not allowed"}');
    } else if (route) {
      route(request, response);
    } else {
      response
        .writeHead(404, { "content-type": "application/json" })
        .end('{"error":"not found: try /healthz, /readyz or /metrics"}');
    }
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", (error: NodeJS.ErrnoException) =>
      reject(
        error.code === "EADDRINUSE"
          ? new Error(
              `ops port ${options.host ?? "127.0.0.1"}:${options.port} is already in use; set MONIRO_HTTP_PORT to a free port`,
            )
          : error,
      ),
    );
    server.listen(options.port, options.host ?? "127.0.0.1", () => resolve());
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
