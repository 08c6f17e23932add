import { lstat, realpath } from "node:fs/promises";
import { dirname, isAbsolute, join, relative, resolve, sep } from "node:path";
import { PathOutsideWorkspaceError } from "../errors.js";

export interface WorkspacePath {
  /** The real absolute path (symlinks resolved as far as the path exists). */
  absolute: string;
  /** Relative to the workspace root, for messages (`.` for the root). */
  display: string;
  /** The real workspace root. */
  root: string;
}

/** Whether `candidate` (absolute, normalised) is `root` or below it. */
export function inside(root: string, candidate: string): boolean {
  return candidate === root || candidate.startsWith(root.endsWith(sep) ? root : `${root}${sep}`);
}

async function exists(path: string): Promise<boolean> {
  try {
    await lstat(path);
    return true;
  } catch {
    return false;
  }
}

/**
 * Resolves a path the model gave inside the workspace root. Relative paths
 * are taken from the root; absolute ones must already lie inside it. The
 * nearest existing ancestor is realpath'd, so a symlink anywhere on the way
 * that leads outside is refused, also for files that do not exist yet.
 * Throws PathOutsideWorkspaceError.
 */
export async function resolveInWorkspace(workspace: string, requested: string): Promise<WorkspacePath> {
  const root = await realpath(workspace);
  if (requested.includes("\0")) throw new PathOutsideWorkspaceError(requested, "it contains a NUL byte");
  const lexical = isAbsolute(requested) ? resolve(requested) : resolve(root, requested);
  // An absolute path may name the workspace through its unresolved spelling (e.g. /tmp → /private/tmp).
  const base = isAbsolute(requested) && inside(resolve(workspace), lexical) ? resolve(workspace) : root;
  const candidate = base === root ? lexical : join(root, relative(base, lexical));
  if (!inside(root, candidate)) {
    throw new PathOutsideWorkspaceError(
      requested,
      isAbsolute(requested) ? "absolute path outside the workspace root" : "'..' leads out of the workspace root",
    );
  }
  let existing = candidate;
  const missing: string[] = [];
  while (!(await exists(existing))) {
    missing.unshift(existing.slice(dirname(existing).length + 1));
    existing = dirname(existing);
  }
  let real: string;
  try {
    real = await realpath(existing);
  } catch {
    throw new PathOutsideWorkspaceError(requested, "it goes through a symlink whose target does not exist");
  }
  if (!inside(root, real)) throw new PathOutsideWorkspaceError(requested, "a symlink on the way leads outside");
  const absolute = missing.length === 0 ? real : join(real, ...missing);
  return { absolute, display: relative(root, absolute) || ".", root };
}
