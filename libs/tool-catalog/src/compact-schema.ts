/**
 * Removes JSON Schema noise the model does not need (every byte is paid on
 * every LLM step): `$schema`, numeric and length bounds, and regex
 * `pattern`s where a `format` already says it. Validation still uses the
 * full zod schema, and its error result names the field and the bound.
 */
const DROPPED = new Set(["$schema", "minimum", "maximum", "minLength", "maxLength", "minItems", "maxItems"]);

export function compactSchema(node: unknown, isPropertyMap = false): unknown {
  if (Array.isArray(node)) return node.map((item) => compactSchema(item));
  if (typeof node !== "object" || node === null) return node;
  const out: Record<string, unknown> = {};
  const source = node as Record<string, unknown>;
  for (const [key, value] of Object.entries(source)) {
    // Inside `properties` the keys are field names, never keywords.
    if (!isPropertyMap && DROPPED.has(key)) continue;
    if (!isPropertyMap && key === "pattern" && typeof source.format === "string") continue;
    out[key] = compactSchema(value, !isPropertyMap && key === "properties");
  }
  return out;
}
