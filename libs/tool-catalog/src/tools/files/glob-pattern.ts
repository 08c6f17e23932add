import { isAbsolute, join } from "node:path";
import { inside } from "../../sandbox/workspace-path.js";
import { IGNORED_DIRECTORIES } from "./file-helpers.js";
import { globLib } from "./lazy-libs.js";

/**
 * A glob must stay inside the search directory: no absolute patterns and no '..' anywhere in it
 * (a segment like `..{,}` is '..' once its braces are expanded, which a segment check misses).
 */
export function checkPattern(pattern: string): string | undefined {
  if (isAbsolute(pattern)) return `Glob '${pattern}' is absolute; use a pattern relative to the workspace.`;
  if (pattern.includes("..")) return `Glob '${pattern}' contains '..'; patterns may not leave the workspace.`;
  return undefined;
}

/**
 * The absolute paths of what `pattern` matches under `cwd` (symbolic links not followed, .git and
 * node_modules ignored), keeping only those inside `root`: whatever a pattern expands to, no path
 * outside the workspace is ever listed or read.
 */
export async function globInside(
  pattern: string,
  cwd: string,
  root: string,
  options: { onlyFiles?: boolean } = {},
): Promise<string[]> {
  const { glob } = await globLib();
  const found = await glob(pattern, {
    cwd,
    dot: true,
    onlyFiles: options.onlyFiles ?? true,
    followSymbolicLinks: false,
    ignore: IGNORED_DIRECTORIES,
  });
  return found.map((file) => join(cwd, file)).filter((path) => inside(root, path));
}
