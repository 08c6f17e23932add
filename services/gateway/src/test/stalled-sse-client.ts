import { connect, type Socket } from "node:net";

/** The body of a chunked HTTP/1.1 response. */
function dechunk(raw: Buffer): string {
  const parts: Buffer[] = [];
  let at = 0;
  for (;;) {
    const lineEnd = raw.indexOf("\r\n", at);
    if (lineEnd < 0) break;
    const size = Number.parseInt(raw.subarray(at, lineEnd).toString("latin1"), 16);
    if (!(size > 0)) break;
    parts.push(raw.subarray(lineEnd + 2, lineEnd + 2 + size));
    at = lineEnd + 2 + size + 2;
  }
  return Buffer.concat(parts).toString("utf8");
}

/** An SSE request on a raw socket that does not read until told to. */
export function stalledClient(
  base: string,
  path: string,
  authorization: string,
): Promise<{ socket: Socket; readAll(): Promise<string> }> {
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    const socket = connect({ host: url.hostname, port: Number(url.port) }, () => {
      socket.write(
        `GET ${path} HTTP/1.1\r\nHost: ${url.host}\r\nAuthorization: ${authorization}\r\nAccept: text/event-stream\r\n\r\n`,
      );
      let head = "";
      const onHead = (chunk: Buffer) => {
        head += chunk.toString("latin1");
        if (!head.includes("\r\n\r\n")) return;
        socket.off("data", onHead);
        socket.pause();
        const chunks: Buffer[] = [Buffer.from(head.slice(head.indexOf("\r\n\r\n") + 4), "latin1")];
        resolve({
          socket,
          readAll: () =>
            new Promise((done) => {
              socket.on("data", (data: Buffer) => chunks.push(data));
              socket.on("close", () => done(dechunk(Buffer.concat(chunks))));
              socket.resume();
            }),
        });
      };
      socket.on("data", onHead);
    });
    socket.on("error", reject);
  });
}

/** The data of the `overflow` event a stream closed for a slow client ends with. */
export interface OverflowData {
  error: { code: string; message: string };
  lastEventId: string;
}

/**
 * Everything a stalled client gets once it reads: its event frames, and the
 * data of the `overflow` event they end with (throws, naming the last frame,
 * when they end with anything else).
 */
export async function readToOverflow(client: { readAll(): Promise<string> }): Promise<{
  frames: string[];
  overflow: OverflowData;
}> {
  const frames = (await client.readAll()).split("\n\n").filter((frame) => frame.includes("event: "));
  const last = frames.at(-1) ?? "";
  if (!/^event: overflow\ndata: /.test(last)) {
    throw new Error(`the stream did not end with an overflow event; its last frame: ${last.slice(0, 200)}`);
  }
  return { frames, overflow: JSON.parse(last.slice(last.indexOf("data: ") + 6)) as OverflowData };
}
