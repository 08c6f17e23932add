export interface SseEvent {
  event: string;
  data: string;
}

/** Incremental Server-Sent Events parser: feed text chunks, get complete events. */
export class SseParser {
  private buffer = "";

  push(chunk: string): SseEvent[] {
    this.buffer += chunk.replace(/\r\n?/g, "\n");
    const events: SseEvent[] = [];
    let boundary = this.buffer.indexOf("\n\n");
    while (boundary >= 0) {
      const frame = this.buffer.slice(0, boundary);
      this.buffer = this.buffer.slice(boundary + 2);
      let event = "message";
      const data: string[] = [];
      for (const line of frame.split("\n")) {
        if (line.startsWith(":")) continue;
        if (line.startsWith("event:")) event = line.slice(6).trim();
        else if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""));
      }
      if (data.length > 0) events.push({ event, data: data.join("\n") });
      boundary = this.buffer.indexOf("\n\n");
    }
    return events;
  }
}

/**
 * Connects to an SSE endpoint; resolves once the server answered (so nothing
 * published after this resolves is missed) with the stream of its events,
 * which ends when `signal` aborts or the server closes.
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
