import { constants } from "node:fs";
import { type FileHandle, open, readdir, rmdir, unlink } from "node:fs/promises";

const { O_RDONLY, O_DIRECTORY, O_NOFOLLOW } = constants;

/** How many times a directory is emptied again when entries keep appearing in it while it is removed. */
const PASSES = 5;

/**
 * `rm -r` of a directory that agents' commands can change while it is removed (a workflow instance's
 * shared directory, removed by the executor, often root, while a member's background process may
 * still run in it). A removal by path (`fs.rm`) can be raced: a directory found on the walk is
 * swapped for a link out of the workspace before it is listed, and the files it leads to are
 * deleted. Here every directory is opened without following a link (`O_NOFOLLOW`) and held open,
 * listed through its descriptor, and each entry named through it (`/proc/self/fd/<fd>/<name>`), so
 * a swapped entry is only ever unlinked as the link it is. `path` itself must be where the caller
 * says (its parent is the caller's); a link there is unlinked, not followed. Nothing there: done.
 */
export async function removeTree(path: string): Promise<void> {
  const directory = await openDirectory(path);
  if (directory === "missing") return;
  if (directory === "not-a-directory") {
    await unlink(path).catch(ignoreMissing);
    return;
  }
  try {
    await emptyDirectory(directory, path);
  } finally {
    await directory.close();
  }
  await rmdir(path).catch(ignoreMissing);
}

async function emptyDirectory(directory: FileHandle, shown: string): Promise<void> {
  const base = `/proc/self/fd/${directory.fd}`;
  for (let pass = 1; ; pass += 1) {
    const names = await readdir(base);
    if (names.length === 0) return;
    if (pass > PASSES) {
      throw new Error(
        `could not remove ${shown}: entries kept appearing in it while it was emptied (${names.length} after ${PASSES} passes); a process is still writing there`,
      );
    }
    for (const name of names) await removeEntry(`${base}/${name}`, `${shown}/${name}`);
  }
}

async function removeEntry(entry: string, shown: string): Promise<void> {
  const child = await openDirectory(entry);
  if (child === "missing") return;
  if (child === "not-a-directory") {
    // A file, a link, a socket…; one that became a directory since is left for the next pass.
    await unlink(entry).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== "ENOENT" && error.code !== "EISDIR" && error.code !== "EPERM") throw error;
    });
    return;
  }
  try {
    await emptyDirectory(child, shown);
  } finally {
    await child.close();
  }
  // Swapped for a link or a file since it was opened: that is unlinked on the next pass.
  await rmdir(entry).catch((error: NodeJS.ErrnoException) => {
    if (error.code !== "ENOENT" && error.code !== "ENOTDIR" && error.code !== "ENOTEMPTY") throw error;
  });
}

async function openDirectory(path: string): Promise<FileHandle | "missing" | "not-a-directory"> {
  try {
    return await open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT") return "missing";
    if (code === "ELOOP" || code === "ENOTDIR") return "not-a-directory";
    throw error;
  }
}

function ignoreMissing(error: NodeJS.ErrnoException): void {
  if (error.code !== "ENOENT") throw error;
}
