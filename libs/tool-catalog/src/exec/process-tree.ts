import { readdirSync, readFileSync } from "node:fs";

/**
 * Killing a whole command tree. The command is spawned detached (its own
 * process group), so one signal to `-pgid` reaches every member; descendants
 * that left the group (setsid) are found by walking /proc parent links first.
 *
 * Zombies count as gone. A member orphaned mid-exit (bubblewrap's inner
 * process is one, on every call) is re-parented to PID 1, and where PID 1
 * does not reap (node as PID 1 in a container without an init) it stays a
 * zombie for good: `kill(-pgid, 0)` would call the group alive forever and
 * every exec would wait out the whole kill grace period.
 */

/** The fields of /proc/<pid>/stat after the command name (state first), or undefined when unreadable. */
function statFields(pid: number | string): string[] | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // The command name may contain spaces and parentheses: fields start after the last ')'.
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  } catch {
    return undefined;
  }
}

const isZombieState = (state: string | undefined) => state === "Z" || state === "X";

/** pid → parent pid for every live process (Linux /proc). */
function parentLinks(): Map<number, number> {
  const links = new Map<number, number>();
  let entries: string[];
  try {
    entries = readdirSync("/proc");
  } catch {
    return links;
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    const fields = statFields(entry);
    if (fields !== undefined) links.set(Number(entry), Number(fields[1]));
  }
  return links;
}

/** Every live descendant of `root` (not including root). */
export function descendantsOf(root: number): number[] {
  const children = new Map<number, number[]>();
  for (const [pid, parent] of parentLinks()) {
    const list = children.get(parent) ?? [];
    list.push(pid);
    children.set(parent, list);
  }
  const found: number[] = [];
  const queue = [root];
  while (queue.length > 0) {
    const pid = queue.shift() as number;
    for (const child of children.get(pid) ?? []) {
      found.push(child);
      queue.push(child);
    }
  }
  return found;
}

/** A process that exists and is not a zombie. */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EPERM") return false;
  }
  return !isZombieState(statFields(pid)?.[0]);
}

function signalQuietly(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(pid, signal);
  } catch {}
}

/** Sends `signal` to the process group and to every known descendant. */
export function signalTree(groupId: number, signal: NodeJS.Signals, extra: readonly number[] = []): number[] {
  const members = [...new Set([...descendantsOf(groupId), ...extra])];
  signalQuietly(-groupId, signal);
  for (const pid of members) signalQuietly(pid, signal);
  return members;
}

/** How long killTree waits for SIGKILLed processes to be gone (the kernel tears them down asynchronously). */
const KILL_SETTLE_MS = 2_000;

/**
 * SIGTERM to the tree, then SIGKILL after `graceMs` to whatever is left
 * (including processes that ignore SIGTERM). Resolves once the tree is gone
 * (or, should the kernel be slower than KILL_SETTLE_MS, after that long), so
 * a caller that reports "killed" reports the truth.
 */
export async function killTree(groupId: number, graceMs: number): Promise<void> {
  const members = signalTree(groupId, "SIGTERM");
  const gone = () => !isAlive(groupId) && members.every((pid) => !isAlive(pid)) && !groupAlive(groupId);
  if (graceMs > 0) {
    const deadline = Date.now() + graceMs;
    while (Date.now() < deadline) {
      if (gone()) return;
      await new Promise((resolve) => setTimeout(resolve, Math.min(50, graceMs)));
    }
  }
  signalTree(groupId, "SIGKILL", members);
  const settle = Date.now() + KILL_SETTLE_MS;
  while (!gone() && Date.now() < settle) await new Promise((resolve) => setTimeout(resolve, 10));
}

/** True while any process of the group exists and is not a zombie. */
export function groupAlive(groupId: number): boolean {
  try {
    process.kill(-groupId, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EPERM") return false;
  }
  let entries: string[];
  try {
    entries = readdirSync("/proc");
  } catch {
    return true;
  }
  let seen = 0;
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    const fields = statFields(entry);
    if (fields === undefined || Number(fields[2]) !== groupId) continue;
    seen += 1;
    if (!isZombieState(fields[0])) return true;
  }
  // Members hidden from this /proc (hidepid, another user): trust kill(-pgid, 0).
  return seen === 0;
}
