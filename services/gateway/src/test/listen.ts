import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Express } from "express";

/**
 * `app` listening on a loopback port for a test. `keepAliveTimeoutMs`: how long an idle
 * keep-alive connection stays (a client reading a closed stream to its end is let go after it).
 * `close()` ends every connection and the server.
 */
export async function listenOnLoopback(
  app: Express,
  options: { keepAliveTimeoutMs?: number } = {},
): Promise<{ server: Server; base: string; port: number; close(): Promise<void> }> {
  const server: Server = app.listen(0, "127.0.0.1");
  if (options.keepAliveTimeoutMs !== undefined) server.keepAliveTimeout = options.keepAliveTimeoutMs;
  await new Promise((resolve) => server.once("listening", resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    server,
    base: `http://127.0.0.1:${port}`,
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
