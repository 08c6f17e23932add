import { lchownSync, lstatSync, type Stats } from "node:fs";
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
 *
 * Synchronous inside on purpose (like the policy lookup): it runs before
 * every exec, usually one lstat of the workspace, a few microseconds on a
 * local directory, while the promise form costs a round trip through libuv's
 * thread pool per call. The workspace is looked at every time, never cached:
 * whoever owns it now is what counts.
 */
export async function handToCommandUser(limits: ExecLimits, root: string, target: string = root): Promise<void> {
  const user = commandUser(limits);
  if (user === undefined || user.uid === process.getuid?.()) return;
  const below = relative(root, target);
  const parts = below === "" ? [] : below.split(sep);
  let path = root;
  for (let index = 0; index <= parts.length; index += 1) {
    if (index > 0) path = join(path, parts[index - 1] as string);
    let info: Stats;
    try {
      info = lstatSync(path);
    } catch {
      return;
    }
    if (info.isSymbolicLink()) return;
    if (info.uid !== user.uid || info.gid !== user.gid) lchownSync(path, user.uid, user.gid);
  }
}
