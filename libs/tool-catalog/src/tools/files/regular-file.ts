import { constants } from "node:fs";
import { type FileHandle, open, realpath } from "node:fs/promises";
import { basename, dirname } from "node:path";
import { NotRegularFileError, PathOutsideWorkspaceError } from "../../errors.js";
import { inside } from "../../sandbox/workspace-path.js";
import { entryIn, openDirectoryInside } from "./checked-directory.js";

/**
 * File I/O of the file tools on regular files only. The path is opened without blocking and
 * without following a final symbolic link, and checked on the open descriptor: a FIFO (which
 * would hold a thread-pool thread in `open()` until a writer came, and with four of them every
 * file operation of the executor), a device or a socket is refused, not waited on.
 */
const { O_RDONLY, O_WRONLY, O_CREAT, O_NONBLOCK, O_NOFOLLOW } = constants;

/**
 * Opens `path` (a regular file inside `root`). What was opened is checked on the descriptor: its real
 * path must still be inside `root`, so a directory on the way swapped for a symbolic link between the
 * path's resolution and this open (another process of the agent's, racing the tool) gets nothing.
 * An open that may create the file goes through its checked parent directory, so nothing is created
 * outside either.
 */
async function openRegular(path: string, flags: number, root: string): Promise<FileHandle> {
  let handle: FileHandle;
  const mode = flags | O_NONBLOCK | O_NOFOLLOW;
  try {
    if ((flags & O_CREAT) === 0) handle = await open(path, mode, 0o666);
    else {
      const parent = await openDirectoryInside(dirname(path), root);
      try {
        handle = await open(entryIn(parent, basename(path)), mode, 0o666);
      } finally {
        await parent.close();
      }
    }
  } catch (error) {
    // A FIFO without a reader refuses a non-blocking write-only open (ENXIO); a final symlink, ELOOP.
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENXIO" || code === "ELOOP") throw new NotRegularFileError(path);
    throw error;
  }
  if (!(await handle.stat()).isFile()) {
    await handle.close();
    throw new NotRegularFileError(path);
  }
  const opened = await realpath(`/proc/self/fd/${handle.fd}`).catch(() => undefined);
  if (opened === undefined || !inside(root, opened)) {
    await handle.close();
    throw new PathOutsideWorkspaceError(path, "a directory on the way was replaced by a link out of it while in use");
  }
  return handle;
}

/** The bytes of a regular file (ENOENT as `readFile` throws it). */
export async function readRegularFile(path: string, root: string): Promise<Buffer> {
  const handle = await openRegular(path, O_RDONLY, root);
  try {
    return await handle.readFile();
  } finally {
    await handle.close();
  }
}

/** Creates or replaces the content of a regular file. */
export async function writeRegularFile(path: string, content: string, root: string): Promise<void> {
  const handle = await openRegular(path, O_WRONLY | O_CREAT, root);
  try {
    await handle.truncate(0);
    await handle.writeFile(content, "utf8");
  } finally {
    await handle.close();
  }
}

/** An open descriptor of a regular file, for reading it as a stream (the caller closes it). */
export function openRegularForReading(path: string, root: string): Promise<FileHandle> {
  return openRegular(path, O_RDONLY, root);
}
