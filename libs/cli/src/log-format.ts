import { parseJson } from "@moniro/envelopes";

const PINO_LEVELS: Record<number, string> = {
  10: "TRACE",
  20: "DEBUG",
  30: "INFO",
  40: "WARN",
  50: "ERROR",
  60: "FATAL",
};

const COLOURS = [36, 35, 33, 32, 34, 96, 95, 93];
const LEVEL_COLOURS: Record<string, number> = { WARN: 33, ERROR: 31, FATAL: 31 };

export interface LogStyle {
  colour: boolean;
  /** Width the `[name]` prefixes are padded to, so messages line up. */
  width: number;
}

/** A stable colour per name (index in the list of names printed). */
export function colourFor(index: number): number {
  return COLOURS[index % COLOURS.length] ?? 37;
}

function paint(text: string, code: number | undefined, on: boolean): string {
  return on && code !== undefined ? `\u001b[${code}m${text}\u001b[0m` : text;
}

/**
 * One line of a child's output for the terminal: `[gateway] INFO  listening`.
 * pino JSON lines are shortened to level + msg (+ the error message); other
 * lines pass through as they are.
 */
export function formatLogLine(name: string, colourIndex: number, line: string, style: LogStyle): string {
  const prefix = paint(`[${name}]`.padEnd(style.width + 2), colourFor(colourIndex), style.colour);
  const trimmed = line.trimEnd();
  if (trimmed.startsWith("{")) {
    const parsed = parseJson(trimmed);
    if (parsed.ok && typeof parsed.value === "object" && parsed.value !== null) {
      const record = parsed.value as { level?: unknown; msg?: unknown; err?: unknown };
      if (typeof record.level === "number" || typeof record.level === "string") {
        const level =
          typeof record.level === "number"
            ? (PINO_LEVELS[record.level] ?? String(record.level))
            : record.level.toUpperCase();
        const error = errorMessage(record.err);
        const message = `${typeof record.msg === "string" ? record.msg : ""}${error ? ` — ${error}` : ""}`;
        return `${prefix} ${paint(level.padEnd(5), LEVEL_COLOURS[level], style.colour)} ${message}`;
      }
    }
  }
  return `${prefix} ${trimmed}`;
}

function errorMessage(err: unknown): string | undefined {
  if (typeof err === "string") return err;
  if (typeof err === "object" && err !== null && typeof (err as { message?: unknown }).message === "string") {
    return (err as { message: string }).message;
  }
  return undefined;
}

/** Splits a byte stream into lines; `flush` returns what is left without a newline. */
export class LineSplitter {
  private buffer = "";
  push(chunk: string): string[] {
    this.buffer += chunk;
    const lines = this.buffer.split("\n");
    this.buffer = lines.pop() ?? "";
    return lines.filter((line) => line.length > 0);
  }
  flush(): string[] {
    const rest = this.buffer;
    this.buffer = "";
    return rest.length > 0 ? [rest] : [];
  }
}
