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

/** The only place that parses untrusted JSON. Never throws. */
export function parseJson(input: Uint8Array | string): Decoded<unknown> {
  let text: string;
  try {
    text = typeof input === "string" ? input : textDecoder.decode(input);
  } catch {
    return { ok: false, error: new DecodeError("payload is not valid UTF-8", []) };
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
