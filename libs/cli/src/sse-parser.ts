import { type SseEvent, SseParser } from "@moniro/client";

export { type SseEvent, SseParser };

/**
 * Connects to an SSE endpoint once (no reconnect: `moniro demo` watches one
 * conversation); resolves once the server answered (so nothing published
 * after this resolves is missed) with the stream of its events, which ends
 * when `signal` aborts or the server closes. Parsing is @moniro/client's.
 */
export async function openSse(
  url: string,
  options: { headers?: Record<string, string>; signal?: AbortSignal } = {},
): Promise<AsyncGenerator<SseEvent>> {
  const response = await fetch(url, {
    headers: { accept: "text/event-stream", ...options.headers },
    ...(options.signal ? { signal: options.signal } : {}),
  });
  if (!response.ok || !response.body) throw new Error(`GET ${url} answered ${response.status}`);
  const body = response.body;
  return (async function* () {
    const parser = new SseParser();
    const decoder = new TextDecoder();
    for await (const chunk of body) {
      for (const event of parser.push(decoder.decode(chunk as Uint8Array, { stream: true }))) yield event;
    }
  })();
}
