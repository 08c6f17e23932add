import { lchown, lstat } from "node:fs/promises";
import { join, relative, sep } from "node:path";
import type { ExecLimits } from "../limits.js";
import { commandUser } from "./sandbox.js";

/**
 * Hands a workspace path to the user commands run as, so a sandboxed command
 * can change what the file tools wrote (the executor writes as itself; when
 * it is root and commands run as nobody, root-owned files would be read-only
 * to them). Chowns `target` and every directory from the workspace root down
 * to it that another user owns; symlinks are left alone (lchown, and a
 * symlink stops the walk). Nothing to do when commands run as the executor.
 */
export async function handToCommandUser(limits: ExecLimits, root: string, target: string = root): Promise<void> {
  const user = commandUser(limits);
  if (user === undefined || user.uid === process.getuid?.()) return;
  const below = relative(root, target);
  const parts = below === "" ? [] : below.split(sep);
  let path = root;
  for (let index = 0; index <= parts.length; index += 1) {
    if (index > 0) path = join(path, parts[index - 1] as string);
    let info: Awaited<ReturnType<typeof lstat>>;
    try {
      info = await lstat(path);
    } catch {
      return;
    }
    if (info.isSymbolicLink()) return;
    if (info.uid !== user.uid || info.gid !== user.gid) await lchown(path, user.uid, user.gid);
  }
}
