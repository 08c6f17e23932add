import { connect } from "node:net";

/** Whether something accepts TCP connections at host:port within `timeoutMs`. */
export function tcpAnswers(host: string, port: number, timeoutMs = 500): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    const done = (answer: boolean) => {
      socket.destroy();
      resolve(answer);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once("connect", () => done(true));
    socket.once("error", () => done(false));
  });
}

export interface Endpoint {
  host: string;
  port: number;
}

/** host and port of a `nats://` or `redis://` URL (default port when absent). */
export function endpointOf(url: string, defaultPort: number): Endpoint {
  const parsed = new URL(url);
  const host = parsed.hostname.replace(/^\[(.*)\]$/, "$1") || "127.0.0.1";
  return { host, port: parsed.port ? Number(parsed.port) : defaultPort };
}

export function isLocalHost(host: string): boolean {
  return host === "127.0.0.1" || host === "localhost" || host === "::1" || host === "0.0.0.0";
}
