import { isAbsolute } from "node:path";

/** A glob must stay inside the search directory: no absolute patterns, no '..' segments. */
export function checkPattern(pattern: string): string | undefined {
  if (isAbsolute(pattern)) return `Glob '${pattern}' is absolute; use a pattern relative to the workspace.`;
  if (pattern.split(/[\\/]/).includes(".."))
    return `Glob '${pattern}' contains '..'; patterns may not leave the workspace.`;
  return undefined;
}
