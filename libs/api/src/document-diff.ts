/** Operation keys (`GET /v1/dlq`) of an OpenAPI document's text; none when it is not one. */
function operations(text: string): Map<string, string> {
  const found = new Map<string, string>();
  let document: { paths?: Record<string, Record<string, unknown>> };
  try {
    document = JSON.parse(text);
  } catch {
    return found;
  }
  for (const [path, methods] of Object.entries(document.paths ?? {})) {
    for (const [method, operation] of Object.entries(methods)) {
      found.set(`${method.toUpperCase()} ${path}`, JSON.stringify(operation));
    }
  }
  return found;
}

/**
 * What differs between a committed document and the generated one, in words:
 * missing / extra / changed operations, else the first differing line.
 */
export function describeDifference(committed: string, generated: string): string {
  if (committed === "") return "the file is missing";
  const before = operations(committed);
  const after = operations(generated);
  const parts: string[] = [];
  const missing = [...after.keys()].filter((key) => !before.has(key));
  const extra = [...before.keys()].filter((key) => !after.has(key));
  const changed = [...after.keys()].filter((key) => before.has(key) && before.get(key) !== after.get(key));
  if (missing.length > 0) parts.push(`missing ${missing.join(", ")}`);
  if (extra.length > 0) parts.push(`no longer in the API: ${extra.join(", ")}`);
  if (changed.length > 0) parts.push(`changed: ${changed.join(", ")}`);
  if (parts.length > 0) return parts.join("; ");
  const a = committed.split("\n");
  const b = generated.split("\n");
  const line = a.findIndex((text, index) => text !== b[index]);
  const at = line < 0 ? a.length : line;
  return `line ${at + 1}: committed ${JSON.stringify(a[at] ?? "")}, generated ${JSON.stringify(b[at] ?? "")}`;
}
