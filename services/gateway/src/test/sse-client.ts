/** One Server-Sent Event as a test sees it. */
export interface ReceivedEvent {
  id?: string;
  event: string;
  data: string;
}

/** A minimal SSE client for tests: collects events (with their `id:`) and waits for one. */
export async function openEvents(url: string, headers: Record<string, string> = {}) {
  const controller = new AbortController();
  const response = await fetch(url, {
    headers: { accept: "text/event-stream", ...headers },
    signal: controller.signal,
  });
  if (!response.ok || !response.body)
    throw new Error(`SSE ${url} answered ${response.status}: ${await response.text()}`);
  const events: ReceivedEvent[] = [];
  const waiters = new Set<() => void>();
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  const pump = (async () => {
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return;
        buffer += value;
        for (let boundary = buffer.indexOf("\n\n"); boundary >= 0; boundary = buffer.indexOf("\n\n")) {
          const frame = buffer.slice(0, boundary);
          buffer = buffer.slice(boundary + 2);
          const event: ReceivedEvent = { event: "message", data: "" };
          const data: string[] = [];
          for (const line of frame.split("\n")) {
            if (line.startsWith("id:")) event.id = line.slice(3).trim();
            else if (line.startsWith("event:")) event.event = line.slice(6).trim();
            else if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""));
          }
          if (data.length === 0) continue;
          event.data = data.join("\n");
          events.push(event);
          for (const wake of waiters) wake();
        }
      }
    } catch {
      // aborted by close()
    }
  })();
  return {
    response,
    events,
    /** Resolves once `count` events match. */
    waitFor(predicate: (event: ReceivedEvent) => boolean, count = 1, timeoutMs = 10_000): Promise<ReceivedEvent[]> {
      return new Promise((resolve, reject) => {
        const check = () => {
          const found = events.filter(predicate);
          if (found.length >= count) {
            clearTimeout(timer);
            waiters.delete(check);
            resolve(found);
          }
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`expected ${count} matching SSE events; got ${JSON.stringify(events)}`));
        }, timeoutMs);
        waiters.add(check);
        check();
      });
    },
    async close() {
      controller.abort();
      await pump;
    },
  };
}
