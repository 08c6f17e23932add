import { closeSync, constants, fchownSync, fstatSync, lchownSync, lstatSync, openSync, type Stats } from "node:fs";
import { isAbsolute, relative, sep } from "node:path";
import type { ExecLimits } from "../limits.js";
import { commandUser } from "./sandbox.js";

const { O_RDONLY, O_DIRECTORY, O_NOFOLLOW } = constants;

/**
 * Hands a workspace path to the user commands run as, so a sandboxed command
 * can change what the file tools wrote (the executor writes as itself; when
 * it is root and commands run as nobody, root-owned files would be read-only
 * to them). Chowns `target` and every directory from the workspace root down
 * to it that another user owns; a symlink stops the walk and is left alone.
 * Nothing to do when commands run as the executor.
 *
 * The walk holds each directory open and names the next entry through it
 * (`/proc/self/fd/<fd>/<name>`, as the file tools' checked directories do):
 * the agent's own background process can rename a directory on the way and
 * put a link out of the workspace in its place, and a chown by path, run as
 * root, would then follow that link and hand the agent a file that is not
 * its own. Directories are opened with `O_NOFOLLOW` and chowned through
 * their descriptor; the target is `lchown`ed in its opened parent.
 *
 * Synchronous inside on purpose (like the policy lookup): it runs before
 * every exec, then one lstat of the workspace root (whose parent no agent
 * can write, so nothing to race there), a few
 * microseconds on a local directory, while the promise form costs a round
 * trip through libuv's thread pool per call. The workspace is looked at every
 * time, never cached: whoever owns it now is what counts.
 */
export async function handToCommandUser(limits: ExecLimits, root: string, target: string = root): Promise<void> {
  const user = commandUser(limits);
  if (user === undefined || user.uid === process.getuid?.()) return;
  const below = relative(root, target);
  if (below === ".." || below.startsWith(`..${sep}`) || isAbsolute(below)) {
    throw new Error(`handToCommandUser: ${target} is not inside the workspace ${root}`);
  }
  if (below === "") {
    // The root alone (every exec): its parent is the executor's, so no agent can swap it; one lstat.
    let info: Stats;
    try {
      info = lstatSync(root);
    } catch {
      return;
    }
    if (!info.isSymbolicLink()) handOver(info, user, () => lchownSync(root, user.uid, user.gid));
    return;
  }
  const names = below.split(sep);
  let directory = openDirectory(root);
  if (directory === undefined) return;
  try {
    handOver(fstatSync(directory), user, () => fchownSync(directory as number, user.uid, user.gid));
    for (const [index, name] of names.entries()) {
      const entry = `/proc/self/fd/${directory}/${name}`;
      if (index === names.length - 1) {
        let info: Stats;
        try {
          info = lstatSync(entry);
        } catch {
          return;
        }
        if (!info.isSymbolicLink()) handOver(info, user, () => lchownSync(entry, user.uid, user.gid));
        return;
      }
      const next = openDirectory(entry);
      if (next === undefined) return;
      closeSync(directory);
      directory = next;
      handOver(fstatSync(directory), user, () => fchownSync(next, user.uid, user.gid));
    }
  } finally {
    closeSync(directory);
  }
}

/** The directory `path` opened without following a link in its last component; undefined when it is not one. */
function openDirectory(path: string): number | undefined {
  try {
    return openSync(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
  } catch {
    return undefined;
  }
}

function handOver(info: Stats, user: { uid: number; gid: number }, chown: () => void): void {
  if (info.uid !== user.uid || info.gid !== user.gid) chown();
}
