import { realpath } from "node:fs/promises";
import { dirname, isAbsolute, join, sep } from "node:path";
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
 * outside the workspace is ever listed or read. Inside by spelling is not enough: the glob library
 * still walks through a link named by a fixed leading segment (`escape/*` with `escape -> /`), so a
 * match is kept only if the real path of its directory (of itself, for a directory) is inside the
 * root's real path. Real paths are cached per directory.
 */
export async function globInside(
  pattern: string,
  cwd: string,
  root: string,
  options: { onlyFiles?: boolean } = {},
): Promise<string[]> {
  const realRoot = await realpath(root);
  // A fixed leading folder that leads out (`root/**` with `root -> /`) is not walked at all.
  const fixed = staticBase(pattern);
  if (fixed !== "") {
    const realBase = await realpath(join(cwd, fixed)).catch(() => undefined);
    if (realBase !== undefined && !inside(realRoot, realBase)) return [];
  }
  const { glob } = await globLib();
  const found = await glob(pattern, {
    cwd,
    dot: true,
    onlyFiles: options.onlyFiles ?? true,
    followSymbolicLinks: false,
    ignore: IGNORED_DIRECTORIES,
  });
  const realDirectories = new Map<string, Promise<string | undefined>>();
  const realDirectory = (directory: string) => {
    let real = realDirectories.get(directory);
    if (real === undefined) {
      real = realpath(directory).catch(() => undefined);
      realDirectories.set(directory, real);
    }
    return real;
  };
  const kept: string[] = [];
  for (const file of found) {
    const path = join(cwd, file);
    if (!inside(root, path)) continue;
    const directory = path.endsWith(sep) ? path.slice(0, -1) : dirname(path);
    const real = await realDirectory(directory);
    if (real !== undefined && inside(realRoot, real)) kept.push(path);
  }
  return kept;
}

/** The leading segments of `pattern` without glob syntax (`src/lib` of `src/lib/**\/*.ts`). */
function staticBase(pattern: string): string {
  const fixed: string[] = [];
  const segments = pattern.split("/");
  for (const segment of segments.slice(0, -1)) {
    if (/[*?[\]{}()!+@\\]/.test(segment)) break;
    fixed.push(segment);
  }
  return fixed.join("/");
}
