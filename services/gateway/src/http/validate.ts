import { closestKey } from "@moniro/config";
import { valueAt } from "@moniro/envelopes";
import type { z } from "zod";
import { HttpError } from "./http-error.js";

type Where = "body" | "query" | "path";

const CODES = { body: "invalid_body", query: "invalid_query", path: "bad_request" } as const;

/** One bad part of a request: the field as the user wrote it (`definition`, `attachments[0].url`, `limit`) and what to do. */
export interface FieldProblem {
  path: string;
  message: string;
}

/**
 * Parses a request part with its @moniro/api schema; a 400 (`invalid_body`,
 * `invalid_query`, `bad_request` for a path parameter) names each bad field,
 * what was given and what it must be (`details.fields` lists them). A body
 * must be a JSON object; `example` shows one.
 */
export function validated<S extends z.ZodType>(schema: S, value: unknown, where: Where, example?: string): z.output<S> {
  if (where === "body") requireJsonObject(value, example);
  const result = schema.safeParse(value ?? {});
  if (result.success) return result.data;
  throw invalidRequest(where, requestProblems(schema, result.error, value ?? {}, where));
}

/** The 400 of bad request fields: the message lists each (`path: message; …`), `details.fields` too. */
export function invalidRequest(where: Where, problems: readonly FieldProblem[]): HttpError {
  return new HttpError(
    400,
    CODES[where],
    problems.map((problem) => `${problem.path}: ${problem.message}`).join("; "),
    {},
    { fields: problems },
  );
}

/** A 400 `invalid_body` unless the parsed body is a JSON object; the message shows `example`. */
export function requireJsonObject(body: unknown, example?: string): asserts body is object {
  if (body === undefined || body === null || typeof body !== "object" || Array.isArray(body)) {
    throw new HttpError(
      400,
      "invalid_body",
      `request body must be a JSON object${example ? ` like ${example}` : ""} sent with content-type application/json`,
    );
  }
}

/**
 * A key the schema does not take: named with the closest known one (a typo)
 * and the ones allowed there; `query`: a query parameter of a route taking `known`.
 */
export function unknownKeyMessage(key: string, known: readonly string[], where: Where): string {
  const what = where === "query" ? "unknown query parameter" : "unknown field";
  if (known.length === 0) return where === "query" ? `${what}; this route takes none: remove it` : `${what}; remove it`;
  const suggestion = closestKey(key, known);
  return suggestion !== undefined
    ? `${what}; did you mean '${suggestion}'? (allowed: ${known.join(", ")})`
    : `${what}; allowed: ${known.join(", ")}`;
}

/**
 * zod's issues → one problem per bad field, in the user's terms: the path as
 * JSON is written (`variables.pr`, `attachments[0].url`), what was given, and
 * what it must be. A schema's own message (`must be at least 1`) is kept;
 * zod's generic wording ("Invalid input: expected string, received number")
 * is replaced. Unknown keys are reported each at its own path.
 */
export function requestProblems(schema: z.ZodType, error: z.ZodError, input: unknown, where: Where): FieldProblem[] {
  return error.issues.flatMap((issue): FieldProblem[] => {
    if (issue.code === "unrecognized_keys") {
      const known = keysAt(schema, issue.path);
      return issue.keys.map((key) => ({
        path: fieldPath([...issue.path, key]),
        message: unknownKeyMessage(key, known, where),
      }));
    }
    return [{ path: fieldPath(issue.path) || where, message: describeIssue(issue, valueAt(input, issue.path), where) }];
  });
}

/** zod's own English wording (services/zod-locales-en.mjs), as opposed to a message a schema gives. */
const ZOD_WORDING = /^(Invalid |Too (big|small): |Unrecognized keys?: )/;

function describeIssue(issue: z.core.$ZodIssue, given: unknown, where: Where): string {
  const own = !ZOD_WORDING.test(issue.message);
  switch (issue.code) {
    case "invalid_type":
      if (given === undefined) return "is required";
      // A JSON value's type is the user's choice: say what was sent; a query's or path's is always text.
      if (own) return where === "body" ? `${issue.message} (got ${shown(given)})` : issue.message;
      return `must be ${expectedOf(issue.expected)}, not ${shown(given)}`;
    case "invalid_value": {
      if (own) return issue.message;
      const options = issue.values.map((value) => JSON.stringify(value));
      return `must be ${options.length === 1 ? options[0] : `one of ${options.join(", ")}`}, not ${shown(given)}`;
    }
    case "too_small": {
      if (own) return issue.message;
      const bound = `${issue.inclusive ? "at least" : "more than"} ${String(issue.minimum)}`;
      if (issue.origin === "string")
        return Number(issue.minimum) <= 1 ? "must not be empty" : `must be ${bound} characters`;
      if (issue.origin === "array") return `must have ${bound} items`;
      return `must be ${bound}, not ${shown(given)}`;
    }
    case "too_big": {
      if (own) return issue.message;
      const bound = `${issue.inclusive ? "at most" : "less than"} ${String(issue.maximum)}`;
      if (issue.origin === "string") return `must be ${bound} characters`;
      if (issue.origin === "array") return `must have ${bound} items`;
      return `must be ${bound}, not ${shown(given)}`;
    }
    case "invalid_format":
      if (own) return issue.message;
      return issue.format === "regex"
        ? `must match ${issue.pattern ?? "its pattern"}, not ${shown(given)}`
        : `must be a valid ${issue.message.replace(/^Invalid (string: )?/, "")}, not ${shown(given)}`;
    case "not_multiple_of":
      return own ? issue.message : `must be a multiple of ${String(issue.divisor)}, not ${shown(given)}`;
    case "invalid_union":
      return own ? issue.message : `is none of the forms this field takes (got ${shown(given)})`;
    case "invalid_key":
      return `has an invalid key: ${issue.issues.map((inner) => inner.message).join("; ")}`;
    default:
      return issue.message;
  }
}

/** zod's `expected` in JSON's terms. */
function expectedOf(expected: string): string {
  switch (expected) {
    case "object":
    case "record":
    case "map":
      return "an object";
    case "array":
    case "tuple":
    case "set":
      return "an array";
    case "boolean":
      return "true or false";
    case "int":
      return "a whole number";
    case "null":
    case "undefined":
      return expected;
    default:
      return `a ${expected}`;
  }
}

/** A given JSON value as a message shows it: `the string "x"`, `the number 5`, `an array`. */
function shown(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  switch (typeof value) {
    case "string":
      return `the string ${JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value)}`;
    case "number":
      return `the number ${String(value)}`;
    case "boolean":
      return String(value);
    case "object":
      return "an object";
    default:
      return typeof value;
  }
}

/** A zod path as JSON is written: `definition.model`, `attachments[0].url`, `variables["my var"]`. */
function fieldPath(path: readonly PropertyKey[]): string {
  let text = "";
  for (const segment of path) {
    if (typeof segment === "number") text += `[${segment}]`;
    else if (typeof segment === "string" && /^[A-Za-z_$][\w$-]*$/.test(segment)) text += text ? `.${segment}` : segment;
    else text += `[${JSON.stringify(String(segment))}]`;
  }
  return text;
}

interface SchemaDef {
  type: string;
  shape?: Record<string, z.ZodType>;
  innerType?: z.ZodType;
  in?: z.ZodType;
  element?: z.ZodType;
  valueType?: z.ZodType;
  getter?: () => z.ZodType;
}

const defOf = (schema: z.ZodType): SchemaDef => (schema as unknown as { _zod: { def: SchemaDef } })._zod.def;

/** The schema without optional / default / nullable / pipe wrappers: what the value itself must be. */
function unwrapped(schema: z.ZodType): z.ZodType {
  let current = schema;
  for (let depth = 0; depth < 16; depth++) {
    const def = defOf(current);
    const inner = def.innerType ?? (def.type === "pipe" ? def.in : undefined) ?? def.getter?.();
    if (!inner) return current;
    current = inner;
  }
  return current;
}

/** The keys the object schema at `path` takes (empty when no object schema is there). */
function keysAt(schema: z.ZodType, path: readonly PropertyKey[]): string[] {
  let current: z.ZodType | undefined = unwrapped(schema);
  for (const segment of path) {
    const def: SchemaDef = defOf(current);
    current =
      def.type === "object"
        ? def.shape?.[String(segment)]
        : def.type === "array"
          ? def.element
          : def.type === "record"
            ? def.valueType
            : undefined;
    if (!current) return [];
    current = unwrapped(current);
  }
  const def = defOf(current);
  return def.type === "object" ? Object.keys(def.shape ?? {}) : [];
}
