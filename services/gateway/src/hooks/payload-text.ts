import type { CompiledTemplate, TemplatePathStep } from "@moniro/config";

/** What a template can name besides the payload. */
export interface DeliveryFacts {
  $hook: string;
  $event?: string;
  $delivery?: string;
}

/** Only own properties of the parsed JSON are read: no path reaches a prototype. */
function lookup(root: unknown, path: readonly TemplatePathStep[]): unknown {
  let value = root;
  for (const step of path) {
    if (typeof step === "number") {
      if (!Array.isArray(value) || step >= value.length) return undefined;
      value = value[step];
    } else if (value !== null && typeof value === "object" && Object.hasOwn(value, step)) {
      value = (value as Record<string, unknown>)[step];
    } else {
      return undefined;
    }
  }
  return value;
}

/** Control and format characters (bidi overrides, zero-width marks) but line breaks and tabs. */
const INVISIBLE = /(?![\n\t])[\p{Cc}\p{Cf}]/gu;

function show(value: unknown): string {
  if (value === undefined || value === null) return "";
  // A provider's strings are written by anyone (a PR body): nothing invisible reaches the agent's text.
  if (typeof value === "string") return value.replace(INVISIBLE, "");
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  return JSON.stringify(value);
}

/** Cuts `text` to `maxChars` characters, never inside a surrogate pair, and says how much was left out. */
export function bounded(text: string, maxChars: number): string {
  if (text.length <= maxChars) return text;
  const marker = ` … [cut: ${text.length - maxChars} more characters]`;
  let end = Math.max(0, maxChars - marker.length);
  const last = text.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end -= 1;
  return `${text.slice(0, end)}${marker}`;
}

/**
 * The text the agent reads after `[webhook:<name>]`: the template filled from
 * the payload, or the payload as compact JSON; at most `maxChars` characters.
 */
export function payloadText(
  payload: unknown,
  options: { template?: CompiledTemplate; facts: DeliveryFacts; maxChars: number },
): string {
  if (!options.template) {
    return bounded(payload === undefined ? "(empty body)" : JSON.stringify(payload), options.maxChars);
  }
  let text = "";
  for (const part of options.template.parts) {
    if ("literal" in part) {
      text += part.literal;
    } else {
      const [root] = part.path;
      const value =
        typeof root === "string" && root.startsWith("$")
          ? options.facts[root as keyof DeliveryFacts]
          : lookup(payload, part.path);
      text += show(value);
    }
    // A template that repeats a huge value stops growing once it is over the bound.
    if (text.length > options.maxChars * 2) break;
  }
  return bounded(text, options.maxChars);
}
