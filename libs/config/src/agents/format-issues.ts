import { valueAt } from "@moniro/envelopes";
import type { z } from "zod";
import type { DefinitionIssue } from "./agent-definition-error.js";
import { closestKey, unknownKeyMessage } from "./closest-key.js";
import { TOOL_POLICY_KEYS } from "./tool-policy.js";

/** What to write when a required field is missing. */
const REQUIRED_HINTS: Record<string, (expectedName: string) => string> = {
  name: (expected) => `is required: add 'name: ${expected}' (it must equal the file name)`,
  model: () => "is required: add the model id, e.g. 'model: claude-sonnet-4-5'",
  "queue.mode": () => "is required: e.g. 'mode: inject'",
};

function typeName(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "a list";
  if (typeof value === "object") return "a mapping";
  return `${typeof value} ${JSON.stringify(value)}`;
}

function describeExpected(expected: string): string {
  if (expected === "object") return "a mapping (key: value lines)";
  if (expected === "array") return "a list";
  return `a ${expected}`;
}

/** One zod issue → a message that says what is wrong and what to write instead. */
function messageOf(issue: z.core.$ZodIssue, path: string, expectedName: string, input: unknown): string[] {
  switch (issue.code) {
    case "invalid_type": {
      if (input === undefined) {
        const hint = REQUIRED_HINTS[path];
        return [hint ? hint(expectedName) : `is required (${describeExpected(issue.expected)})`];
      }
      if (issue.message.startsWith("must")) return [issue.message];
      return [`must be ${describeExpected(issue.expected)}, not ${typeName(input)}`];
    }
    case "invalid_value": {
      const options = issue.values.map(String);
      const got = typeof input === "string" ? input : undefined;
      const suggestion = got !== undefined ? closestKey(got, options) : undefined;
      return [
        `must be one of ${options.join(", ")}${got !== undefined ? ` (got '${got}')` : ""}${suggestion ? `; did you mean '${suggestion}'?` : ""}`,
      ];
    }
    case "unrecognized_keys": {
      const known = path.endsWith("tools") || path === "tools" ? TOOL_POLICY_KEYS : [];
      return issue.keys.map((key) =>
        known.length > 0 ? unknownKeyMessage(key, known) : `unknown key '${key}'; remove it`,
      );
    }
    case "too_small":
      if (issue.message.startsWith("must")) return [issue.message];
      if (issue.origin === "string") return ["must not be empty"];
      return [`must be ${issue.inclusive ? "at least" : "greater than"} ${String(issue.minimum)}`];
    case "too_big":
      if (issue.message.startsWith("must")) return [issue.message];
      return [`must be ${issue.inclusive ? "at most" : "less than"} ${String(issue.maximum)}`];
    case "invalid_key":
      // A record's key (a workflow name in moniro.yaml, a variable name): the key's own problem.
      return issue.issues.map((inner) => inner.message);
    default:
      return [issue.message];
  }
}

/** zod issues → `{ path, message }` per problem, unknown keys reported at their own path. */
export function definitionIssues(error: z.ZodError, expectedName: string, raw: unknown): DefinitionIssue[] {
  const result: DefinitionIssue[] = [];
  for (const issue of error.issues) {
    const base = issue.path.map(String).join(".");
    const messages = messageOf(issue, base, expectedName, valueAt(raw, issue.path));
    if (issue.code === "unrecognized_keys") {
      issue.keys.forEach((key, index) => {
        result.push({ path: base ? `${base}.${key}` : key, message: messages[index] ?? "unknown key" });
      });
      continue;
    }
    for (const message of messages) result.push({ path: base || "(file)", message });
  }
  return result;
}
