import type { SseEvent } from "@moniro/client";
import { parseJson } from "@moniro/envelopes";

export interface Output {
  /** Text without a newline (streamed monologue). */
  write(text: string): void;
  colour: boolean;
}

type Fields = Record<string, unknown>;

const DIM = 2;
const CYAN = 36;
const YELLOW = 33;
const GREEN = 32;
const RED = 31;

function shorten(value: unknown, max = 160): string {
  const text = typeof value === "string" ? value : JSON.stringify(value);
  const flat = (text ?? "").replace(/\s+/g, " ").trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

function pick(fields: Fields, ...names: string[]): unknown {
  for (const name of names) if (fields[name] !== undefined) return fields[name];
  return undefined;
}

/** The `error` of a gateway event (`gap`, `overflow`, `unreadable`: docs/api.md). */
function errorOf(body: Fields): { code: string; message: string } {
  const error = typeof body.error === "object" && body.error !== null ? (body.error as Fields) : {};
  return {
    code: typeof error.code === "string" ? error.code : "unknown",
    message: typeof error.message === "string" ? error.message : "",
  };
}

/**
 * A `gap` event (docs/api.md) in a line: what was missed, why, and where the stream resumes.
 * `resumesAfter` "0" / "0-0" is the stream's start (nothing was stored).
 */
function gapLine(body: Fields): string {
  const { code, message } = errorOf(body);
  const last = typeof body.lastEventId === "string" ? body.lastEventId : "?";
  const after = typeof body.resumesAfter === "string" ? body.resumesAfter : undefined;
  const resumes =
    after === undefined
      ? ""
      : after === "0" || after === "0-0"
        ? "; resuming from the start"
        : `; resuming after event ${after}`;
  switch (code) {
    case "messages_removed":
      return `missed the messages after event ${last}${after !== undefined ? ` up to ${after}` : ""}: no longer stored (removed by the stream's limits)${resumes}`;
    case "unknown_event_id":
      return `event ${last} is not one this stream sent (past its end: recreated since, or made up), so what it held before this connection is not shown${resumes}`;
    default:
      return `gap after event ${last} (${code}${message ? `: ${shorten(message, 200)}` : ""})${resumes}`;
  }
}

/** What an event was, for callers that wait for something: an answer, or the end of a cycle. */
export type PrintedKind = "message" | "message-sent" | "cycle-started" | "cycle-ended" | "other";

/**
 * Turns the gateway's SSE events into what a person watching wants to see:
 * the agent's monologue as it streams, its tool calls, the message it sent.
 * Unknown event types are shown compactly rather than dropped.
 */
export class EventPrinter {
  private midLine = false;

  constructor(private readonly out: Output) {}

  private paint(text: string, code: number): string {
    return this.out.colour ? `\u001b[${code}m${text}\u001b[0m` : text;
  }

  private line(text: string): void {
    if (this.midLine) this.out.write("\n");
    this.midLine = false;
    this.out.write(`${text}\n`);
  }

  /** Prints one event; returns what it was, so callers can wait for a message. */
  print(event: SseEvent): PrintedKind {
    const parsed = parseJson(event.data);
    const body: Fields =
      parsed.ok && typeof parsed.value === "object" && parsed.value !== null ? (parsed.value as Fields) : {};
    const data: Fields = typeof body.data === "object" && body.data !== null ? (body.data as Fields) : {};
    switch (event.event) {
      case "llm-delta": {
        const text = pick(data, "text", "delta", "content");
        if (typeof text === "string" && text.length > 0) {
          if (!this.midLine) this.out.write(this.paint("  thinks: ", DIM));
          this.out.write(this.paint(text, DIM));
          this.midLine = !text.endsWith("\n");
        }
        return "other";
      }
      case "cycle-started":
        this.line(this.paint(`── ${body.agent ?? "agent"} wakes up (cycle started)`, CYAN));
        return "cycle-started";
      case "cycle-ended":
        this.line(this.paint(`── cycle ended${data.reason ? ` (${shorten(data.reason, 60)})` : ""}`, CYAN));
        return "cycle-ended";
      case "input-injected":
        this.line(this.paint(`  reads the message from ${pick(data, "source") ?? "?"}`, DIM));
        return "other";
      case "tool-call-started": {
        const input = pick(data, "input", "arguments");
        const args = input === undefined ? "" : `(${shorten(input, 200)})`;
        this.line(this.paint(`  → calls ${pick(data, "tool", "name") ?? "a tool"}${args}`, YELLOW));
        return "other";
      }
      case "tool-call-ended": {
        const failed = data.isError === true;
        const result = pick(data, "content", "output", "result", "preview");
        const took = typeof data.durationMs === "number" ? ` in ${data.durationMs} ms` : "";
        const outcome = data.canceled === true ? "cancelled" : failed ? "failed" : "done";
        this.line(
          this.paint(
            `  ← ${pick(data, "tool", "name") ?? "tool"} ${outcome}${took}${result !== undefined ? `: ${shorten(result)}` : ""}`,
            failed ? RED : YELLOW,
          ),
        );
        return "other";
      }
      case "message-sent": {
        const text = pick(data, "text");
        const to = pick(data, "to") ?? "?";
        this.line(
          this.paint(
            `  ✉ ${body.agent ?? "agent"} sent a message to ${to}${typeof text === "string" ? `: ${shorten(text, 400)}` : ""}`,
            GREEN,
          ),
        );
        return "message-sent";
      }
      case "message":
        this.line(
          this.paint(
            `✉ message from ${body.agent ?? "agent"} to ${body.to ?? "?"}:\n${String(body.text ?? "")}`,
            GREEN,
          ),
        );
        return "message";
      case "error":
        this.line(this.paint(`  ! error: ${shorten(pick(data, "message", "error") ?? data, 300)}`, RED));
        return "other";
      case "gap":
        this.line(this.paint(`  ! ${gapLine(body)}`, YELLOW));
        return "other";
      case "overflow": {
        const after = typeof body.lastEventId === "string" ? `, resuming after event ${body.lastEventId}` : "";
        this.line(
          this.paint(`  ! disconnected for reading too slowly (${errorOf(body).code}); reconnecting${after}`, YELLOW),
        );
        return "other";
      }
      case "unreadable":
        this.line(
          this.paint(`  ! skipped event ${event.id ?? body.id ?? "?"}: ${shorten(errorOf(body).message, 300)}`, YELLOW),
        );
        return "other";
      case "state-changed":
        this.line(this.paint(`  state: ${shorten(pick(data, "state", "to") ?? data, 60)}`, DIM));
        return "other";
      default:
        this.line(this.paint(`  ${event.event}: ${shorten(Object.keys(data).length > 0 ? data : body)}`, DIM));
        return "other";
    }
  }
}
