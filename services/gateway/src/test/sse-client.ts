import { type SseEvent, SseParser } from "@moniro/client";

/** One Server-Sent Event as a test sees it. */
export type ReceivedEvent = SseEvent;

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
  const parser = new SseParser();
  const pump = (async () => {
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return;
        for (const event of parser.push(value)) {
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
    /** Resolves when the stream ends (the server closed it, or `close()`). */
    ended: pump,
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
      // The abort errors fetch's body, but the read pending on the decoder piped from it has been seen
      // to wait on (a test timed out after every event had arrived): cancelling the reader ends that
      // read at once, whatever the pipe does.
      void reader.cancel().catch(() => undefined);
      await pump;
    },
  };
}
