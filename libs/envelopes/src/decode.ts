import type { z } from "zod";
import type { DlqIssue } from "./dlq.js";

/** Why bytes could not become an envelope: the one error type every consumer handles. */
export class DecodeError extends Error {
  override readonly name = "DecodeError";
  constructor(
    readonly reason: string,
    readonly issues: DlqIssue[],
  ) {
    super(issues.length > 0 ? `${reason}: ${issues.map((i) => `${i.path}: ${i.message}`).join("; ")}` : reason);
  }
}

export type Decoded<T> = { ok: true; value: T } | { ok: false; error: DecodeError };

const textDecoder = new TextDecoder("utf-8", { fatal: true });

/**
 * How deeply arrays and objects may nest in a payload. JSON.parse accepts far deeper
 * values, but JSON.stringify, structuredClone and every recursive walk after it overflow
 * the stack at a few thousand levels: refused here, such a payload goes to the DLQ
 * instead of failing its handler on every redelivery. No envelope nests near 512.
 */
export const MAX_JSON_DEPTH = 512;

const OPEN_BRACKET = 0x5b;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACKET = 0x5d;
const CLOSE_BRACE = 0x7d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/** Whether `text` opens more than `limit` arrays/objects at once; brackets inside strings do not count. */
function nestsDeeperThan(text: string, limit: number): boolean {
  // A value needs one character per level: short text cannot be too deep.
  if (text.length <= limit) return false;
  // Nor can text with few brackets: most payloads are ruled out by a few native searches.
  if (occurrences(text, "[", limit) + occurrences(text, "{", limit) <= limit) return false;
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      i = closingQuote(text, i);
    } else if (c === OPEN_BRACKET || c === OPEN_BRACE) {
      if (++depth > limit) return true;
    } else if (c === CLOSE_BRACKET || c === CLOSE_BRACE) {
      depth--;
    }
  }
  return false;
}

/** How often `char` occurs in `text`, counted up to `max + 1`. */
function occurrences(text: string, char: string, max: number): number {
  let count = 0;
  for (let at = text.indexOf(char); at !== -1 && count <= max; at = text.indexOf(char, at + 1)) count++;
  return count;
}

/** The index of the quote that closes the string opened at `open` (the text's end when none does). */
function closingQuote(text: string, open: number): number {
  // indexOf skips a string's content at native speed: most of a payload's bytes are strings.
  let quote = text.indexOf('"', open + 1);
  while (quote !== -1) {
    let backslashes = 0;
    while (text.charCodeAt(quote - 1 - backslashes) === BACKSLASH) backslashes++;
    if (backslashes % 2 === 0) return quote;
    quote = text.indexOf('"', quote + 1);
  }
  return text.length;
}

/** The only place that parses untrusted JSON. Never throws. */
export function parseJson(input: Uint8Array | string): Decoded<unknown> {
  let text: string;
  try {
    text = typeof input === "string" ? input : textDecoder.decode(input);
  } catch {
    return { ok: false, error: new DecodeError("payload is not valid UTF-8", []) };
  }
  if (nestsDeeperThan(text, MAX_JSON_DEPTH)) {
    return {
      ok: false,
      error: new DecodeError(`payload is nested deeper than ${MAX_JSON_DEPTH} levels of arrays and objects`, []),
    };
  }
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch (error) {
    return {
      ok: false,
      error: new DecodeError(`payload is not valid JSON (${(error as Error).message})`, []),
    };
  }
}

/** Turns zod issues into `{ path, message }` pairs with a dotted path ("(root)" for the whole value). */
export function issuesOf(error: z.ZodError): DlqIssue[] {
  return error.issues.map((issue) => ({
    path: issue.path.length === 0 ? "(root)" : issue.path.map(String).join("."),
    message: issue.message,
  }));
}

/** The input's value at a zod issue's `path` (zod issues do not carry their input); undefined when absent. */
export function valueAt(input: unknown, path: readonly PropertyKey[]): unknown {
  let value = input;
  for (const key of path) {
    if (value === null || typeof value !== "object") return undefined;
    value = (value as Record<PropertyKey, unknown>)[key];
  }
  return value;
}

/** Validates an already-parsed value against a schema. */
export function validate<S extends z.ZodType>(schema: S, value: unknown, what = "envelope"): Decoded<z.output<S>> {
  const result = schema.safeParse(value);
  if (result.success) return { ok: true, value: result.data };
  return { ok: false, error: new DecodeError(`invalid ${what}`, issuesOf(result.error)) };
}

/** Bytes (from NATS, HTTP or Redis) → a validated envelope, or a DecodeError naming each bad field. */
export function decode<S extends z.ZodType>(
  schema: S,
  input: Uint8Array | string,
  what = "envelope",
): Decoded<z.output<S>> {
  const parsed = parseJson(input);
  if (!parsed.ok) return parsed;
  return validate(schema, parsed.value, what);
}

/** Like decode, but throws the DecodeError: for trusted internal data where a failure is a bug. */
export function decodeOrThrow<S extends z.ZodType>(
  schema: S,
  input: Uint8Array | string,
  what = "envelope",
): z.output<S> {
  const decoded = decode(schema, input, what);
  if (!decoded.ok) throw decoded.error;
  return decoded.value;
}
