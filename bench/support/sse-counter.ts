import { type ClientRequest, request } from "node:http";

/** A light SSE client for benchmarks: counts the frames of one event type and the bytes, parses nothing else. */
export interface SseCounter {
  /** Frames of the counted event type received so far. */
  readonly count: number;
  readonly bytes: number;
  /** Events of any type received so far. */
  readonly events: number;
  /** Resolves once `count` reaches `n`. */
  reached(n: number, timeoutMs?: number): Promise<void>;
  close(): void;
}

/** Opens `GET url` as an SSE client and counts `event: <type>` frames. */
export function openSseCounter(url: string, type: string): Promise<SseCounter> {
  const marker = `event: ${type}\n`;
  let count = 0;
  let bytes = 0;
  let events = 0;
  const anyEvent = "\nevent: ";
  let carry = "";
  const waiters: Array<{ n: number; resolve: () => void }> = [];
  let outgoing: ClientRequest | undefined;
  return new Promise((resolve, reject) => {
    outgoing = request(url, { headers: { accept: "text/event-stream" }, agent: false }, (response) => {
      if (response.statusCode !== 200) {
        reject(new Error(`SSE ${url} answered ${response.statusCode}`));
        response.resume();
        return;
      }
      response.setEncoding("utf8");
      response.on("data", (chunk: string) => {
        bytes += chunk.length;
        const text = carry + chunk;
        let at = text.indexOf(marker);
        let end = 0;
        while (at >= 0) {
          count++;
          end = at + marker.length;
          at = text.indexOf(marker, end);
        }
        for (let i = text.indexOf(anyEvent); i >= 0; i = text.indexOf(anyEvent, i + anyEvent.length)) {
          if (i + anyEvent.length > carry.length) events++;
        }
        carry = text.slice(Math.max(end, text.length - marker.length));
        for (let i = waiters.length - 1; i >= 0; i--) {
          const waiter = waiters[i];
          if (waiter && count >= waiter.n) {
            waiters.splice(i, 1);
            waiter.resolve();
          }
        }
      });
      resolve({
        get count() {
          return count;
        },
        get bytes() {
          return bytes;
        },
        get events() {
          return events;
        },
        reached(n, timeoutMs = 15_000) {
          if (count >= n) return Promise.resolve();
          return new Promise((done, fail) => {
            const timer = setTimeout(
              () => fail(new Error(`SSE ${url}: ${count} of ${n} '${type}' events within ${timeoutMs} ms`)),
              timeoutMs,
            );
            waiters.push({
              n,
              resolve: () => {
                clearTimeout(timer);
                done();
              },
            });
          });
        },
        close() {
          outgoing?.destroy();
        },
      });
    });
    outgoing.on("error", reject);
    outgoing.end();
  });
}
