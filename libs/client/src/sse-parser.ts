/** One Server-Sent Event: its name (`message` when the frame has no `event:`), data, and the frame's `id:` if any. */
export interface SseEvent {
  event: string;
  data: string;
  id?: string;
}

/**
 * Incremental Server-Sent Events parser (the WHATWG rules): feed text
 * chunks, get complete events. Lines end in LF, CRLF or CR (also split
 * across chunks); `:` lines are comments; a frame without `data:` dispatches
 * nothing but its `id:` still moves `lastEventId`; `retry:` (digits only)
 * sets `retryMs`. The one SSE parser of the repository (the CLI and the
 * gateway's tests use it).
 */
export class SseParser {
  private buffer = "";
  private started = false;
  private eventName = "";
  private data: string[] = [];
  private frameId: string | undefined;
  /** The last `id:` seen (persists across events, as EventSource's lastEventId). */
  lastEventId: string | undefined;
  /** The last `retry:` the server sent, in milliseconds. */
  retryMs: number | undefined;

  push(chunk: string): SseEvent[] {
    let text = this.buffer + chunk;
    if (!this.started && text.length > 0) {
      this.started = true;
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    }
    const events: SseEvent[] = [];
    let start = 0;
    for (let index = 0; index < text.length; index++) {
      const char = text[index];
      if (char !== "\n" && char !== "\r") continue;
      // A CR at the very end may be the first half of a CRLF split across chunks: wait for more.
      if (char === "\r" && index === text.length - 1) break;
      this.line(text.slice(start, index), events);
      if (char === "\r" && text[index + 1] === "\n") index++;
      start = index + 1;
    }
    this.buffer = text.slice(start);
    return events;
  }

  private line(line: string, events: SseEvent[]): void {
    if (line === "") {
      this.dispatch(events);
      return;
    }
    if (line.startsWith(":")) return;
    const colon = line.indexOf(":");
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    switch (field) {
      case "event":
        this.eventName = value;
        return;
      case "data":
        this.data.push(value);
        return;
      case "id":
        if (!value.includes("\0")) {
          this.frameId = value;
          this.lastEventId = value;
        }
        return;
      case "retry":
        if (/^\d+$/.test(value)) this.retryMs = Number(value);
        return;
      default:
        return;
    }
  }

  private dispatch(events: SseEvent[]): void {
    if (this.data.length > 0) {
      events.push({
        event: this.eventName || "message",
        data: this.data.join("\n"),
        ...(this.frameId !== undefined ? { id: this.frameId } : {}),
      });
    }
    this.eventName = "";
    this.data = [];
    this.frameId = undefined;
  }
}
