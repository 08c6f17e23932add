import { constants } from "node:fs";
import { type FileHandle, mkdir, open, realpath, unlink } from "node:fs/promises";
import { basename, dirname, isAbsolute, join, relative, sep } from "node:path";
import { PathOutsideWorkspaceError } from "../../errors.js";
import { inside } from "../../sandbox/workspace-path.js";

/**
 * Directory operations of the file tools bound to the directory that was checked. A path checked
 * and then used again by name can be redirected in between: another process of the agent's renames a
 * directory on the way and puts a symbolic link out of the workspace in its place. So the directory
 * is opened, its descriptor's real path checked, and the entry is then named through
 * `/proc/self/fd/<fd>/<name>`: that magic link is the opened directory, whatever its path becomes.
 * `unlink`, `mkdir` and an `O_NOFOLLOW` open do not follow the last component either.
 */
const { O_RDONLY, O_DIRECTORY } = constants;

/** Opens the directory `path`; its real path, read on the descriptor, must be inside `root` (real). */
export async function openDirectoryInside(path: string, root: string): Promise<FileHandle> {
  const handle = await open(path, O_RDONLY | O_DIRECTORY);
  const opened = await realpath(`/proc/self/fd/${handle.fd}`).catch(() => undefined);
  if (opened === undefined || !inside(root, opened)) {
    await handle.close();
    throw new PathOutsideWorkspaceError(path, "a directory on the way leads out of it (a link, perhaps swapped in)");
  }
  return handle;
}

/** A path naming `name` in the opened directory (or the directory itself without a name). */
export function entryIn(directory: FileHandle, name = ""): string {
  return name === "" ? `/proc/self/fd/${directory.fd}` : `/proc/self/fd/${directory.fd}/${name}`;
}

/** Runs `use` with the checked directory `path` open, and closes it. */
export async function inDirectoryInside<T>(
  path: string,
  root: string,
  use: (directory: FileHandle) => Promise<T>,
): Promise<T> {
  const directory = await openDirectoryInside(path, root);
  try {
    return await use(directory);
  } finally {
    await directory.close();
  }
}

/** Deletes the file `path` from its parent directory, which must be inside `root`. */
export async function removeFileInside(path: string, root: string, options: { missingOk?: boolean } = {}) {
  try {
    await inDirectoryInside(dirname(path), root, (directory) => unlink(entryIn(directory, basename(path))));
  } catch (error) {
    if (options.missingOk !== true || (error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
  }
}

/** `mkdir -p` of `path` below `root`, one level at a time, each in a checked parent. */
export async function makeDirectoriesInside(path: string, root: string): Promise<void> {
  const below = relative(root, path);
  if (below.startsWith("..") || isAbsolute(below)) throw new PathOutsideWorkspaceError(path, "not below the root");
  let current = root;
  for (const name of below === "" ? [] : below.split(sep)) {
    await inDirectoryInside(current, root, async (directory) => {
      try {
        await mkdir(entryIn(directory, name));
      } catch (error) {
        // Something already there is checked when it is opened as the next parent.
        if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
      }
    });
    current = join(current, name);
  }
  // The last level may exist as a file or a link: opening it says so (ENOTDIR, or outside).
  await inDirectoryInside(current, root, async () => {});
}
