import { readdirSync, readFileSync } from "node:fs";

/**
 * Killing a whole command tree. The command is spawned detached (its own
 * process group), so one signal to `-pgid` reaches every member; descendants
 * that left the group (setsid) are found by walking /proc parent links first.
 */

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
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      // The command name may contain spaces and parentheses: fields start after the last ')'.
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      links.set(Number(entry), Number(fields[1]));
    } catch {}
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

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
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

/**
 * SIGTERM to the tree, then SIGKILL after `graceMs` to whatever is left
 * (including processes that ignore SIGTERM). Resolves after the SIGKILL.
 */
export async function killTree(groupId: number, graceMs: number): Promise<void> {
  const members = signalTree(groupId, "SIGTERM");
  if (graceMs > 0) {
    const deadline = Date.now() + graceMs;
    while (Date.now() < deadline) {
      if (!isAlive(groupId) && members.every((pid) => !isAlive(pid)) && !groupAlive(groupId)) return;
      await new Promise((resolve) => setTimeout(resolve, Math.min(50, graceMs)));
    }
  }
  signalTree(groupId, "SIGKILL", members);
}

/** True while any process of the group exists. */
export function groupAlive(groupId: number): boolean {
  try {
    process.kill(-groupId, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}
