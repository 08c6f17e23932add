import { type SseEvent, SseParser } from "@moniro/client";

export type { SseEvent };

/**
 * Subscribes to a Server-Sent Events endpoint and collects events, so a test
 * can wait for the one it expects.
 */
export async function openSse(url: string, headers: Record<string, string> = {}) {
  const controller = new AbortController();
  const response = await fetch(url, {
    headers: { accept: "text/event-stream", ...headers },
    signal: controller.signal,
  });
  if (!response.ok || !response.body) throw new Error(`SSE ${url} answered ${response.status}`);
  const events: SseEvent[] = [];
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
    events,
    /** Resolves with the first event matching `predicate`, or rejects after `timeoutMs`. */
    waitFor(predicate: (event: SseEvent) => boolean, timeoutMs = 20_000): Promise<SseEvent> {
      return new Promise((resolve, reject) => {
        const check = () => {
          const found = events.find(predicate);
          if (found) {
            clearTimeout(timer);
            waiters.delete(check);
            resolve(found);
          }
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(
            new Error(`no matching SSE event within ${timeoutMs} ms; got: ${events.map((e) => e.event).join(", ")}`),
          );
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
