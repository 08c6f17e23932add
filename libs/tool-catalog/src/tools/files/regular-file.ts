import { constants } from "node:fs";
import { type FileHandle, open } from "node:fs/promises";
import { NotRegularFileError } from "../../errors.js";

/**
 * File I/O of the file tools on regular files only. The path is opened without blocking and
 * without following a final symbolic link, and checked on the open descriptor: a FIFO (which
 * would hold a thread-pool thread in `open()` until a writer came, and with four of them every
 * file operation of the executor), a device or a socket is refused, not waited on.
 */
const { O_RDONLY, O_WRONLY, O_CREAT, O_NONBLOCK, O_NOFOLLOW } = constants;

async function openRegular(path: string, flags: number): Promise<FileHandle> {
  let handle: FileHandle;
  try {
    handle = await open(path, flags | O_NONBLOCK | O_NOFOLLOW, 0o666);
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
  return handle;
}

/** The bytes of a regular file (ENOENT as `readFile` throws it). */
export async function readRegularFile(path: string): Promise<Buffer> {
  const handle = await openRegular(path, O_RDONLY);
  try {
    return await handle.readFile();
  } finally {
    await handle.close();
  }
}

/** Creates or replaces the content of a regular file. */
export async function writeRegularFile(path: string, content: string): Promise<void> {
  const handle = await openRegular(path, O_WRONLY | O_CREAT);
  try {
    await handle.truncate(0);
    await handle.writeFile(content, "utf8");
  } finally {
    await handle.close();
  }
}

/** An open descriptor of a regular file, for reading it as a stream (the caller closes it). */
export function openRegularForReading(path: string): Promise<FileHandle> {
  return openRegular(path, O_RDONLY);
}
