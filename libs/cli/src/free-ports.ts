import { createServer } from "node:net";
import { STACK_SERVICES, type StackOptions, type StackService } from "./stack-plan.js";

/** A TCP port on 127.0.0.1 that nothing listens on right now. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => resolve(typeof address === "object" && address ? address.port : 0));
    });
  });
}

/**
 * Port 0 means "any free port": a gateway port of 0 gets one for the gateway,
 * a base port of 0 one for each other service. The choice lands in
 * `options.ports`, so the services are told a real port and `up` can print it.
 */
export async function choosePorts<T extends StackOptions>(options: T, pick = freePort): Promise<T> {
  const ports: Partial<Record<StackService, number>> = { ...options.ports };
  const picked = new Set<number>();
  for (const service of STACK_SERVICES) {
    const zero = service === "gateway" ? options.gatewayPort === 0 : options.basePort === 0;
    if (!zero || ports[service] !== undefined) continue;
    let port = await pick();
    while (picked.has(port)) port = await pick();
    picked.add(port);
    ports[service] = port;
  }
  return { ...options, ports };
}
