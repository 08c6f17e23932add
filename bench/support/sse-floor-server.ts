import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { Socket } from "node:net";
import { stamp } from "@moniro/envelopes";
import { dmTraffic } from "./dm-traffic.js";

/**
 * `sse-fanout`'s floor: what node:http alone costs for the gateway's DM path,
 * with no NATS, no checks and no telemetry. `POST /v1/agents/<agent>/messages`
 * parses its JSON body and answers 202; then the DM's 7 events and its reply
 * go to every client of `GET /v1/agents/<agent>/events` as SSE frames, built
 * once per DM and written to each client's socket in one write (an HTTP/1.1
 * chunk), as the gateway writes them. Prints its port on stdout.
 */
const clients = new Set<Socket>();
let dms = 0;

function frame(event: string, payload: unknown): string {
  return `event: ${event}\ndata: ${JSON.stringify(payload)}\n\n`;
}

/** The DM's frames as one HTTP chunk. */
function dmChunk(agent: string): Buffer {
  const n = ++dms;
  const traffic = dmTraffic(`c${n}`, n);
  let text = "";
  for (const [type, data] of traffic.events) text += frame(type, { ...stamp(), agent, type, data });
  text += frame("message", { ...stamp(), agent, to: "http:bench", text: traffic.reply });
  const body = Buffer.from(text);
  return Buffer.concat([Buffer.from(`${body.byteLength.toString(16)}\r\n`), body, Buffer.from("\r\n")]);
}

function events(response: ServerResponse): void {
  response.writeHead(200, { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache" });
  response.write(": connected\n\n");
  const socket = response.socket;
  if (!socket) return;
  clients.add(socket);
  response.once("close", () => clients.delete(socket));
}

function message(request: IncomingMessage, response: ServerResponse, agent: string): void {
  const parts: Buffer[] = [];
  request.on("data", (chunk: Buffer) => parts.push(chunk));
  request.on("end", () => {
    JSON.parse(Buffer.concat(parts).toString("utf8"));
    const body = JSON.stringify({ id: `m${dms + 1}` });
    response.writeHead(202, { "content-type": "application/json", "content-length": Buffer.byteLength(body) });
    response.end(body);
    setImmediate(() => {
      const chunk = dmChunk(agent);
      for (const socket of clients) socket.write(chunk);
    });
  });
}

const server = createServer((request, response) => {
  const match = /^\/v1\/agents\/([^/]+)\/(events|messages)$/.exec(request.url ?? "");
  if (match?.[2] === "events" && request.method === "GET") return events(response);
  if (match?.[2] === "messages" && request.method === "POST") return message(request, response, match[1] as string);
  response.writeHead(404).end();
});
server.listen(0, "127.0.0.1", () => {
  const address = server.address();
  process.stdout.write(`${typeof address === "object" && address ? address.port : 0}\n`);
});
process.once("SIGTERM", () => process.exit(0));
