import { readdirSync, readFileSync } from "node:fs";

/** A pid that exists and is not a zombie waiting for a reaper. */
export function running(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2)[0] !== "Z";
  } catch {
    return false;
  }
}

/**
 * Live (non-zombie) host pids whose command line contains `marker`. Pids a
 * sandboxed command writes are pids of its own namespace, so tests find its
 * processes from the host by a unique argument instead.
 */
export function processesWith(marker: string): number[] {
  return readdirSync("/proc")
    .filter((entry) => /^\d+$/.test(entry))
    .filter((entry) => {
      try {
        return readFileSync(`/proc/${entry}/cmdline`, "utf8").includes(marker) && running(Number(entry));
      } catch {
        return false;
      }
    })
    .map(Number);
}

/** A number `sleep` accepts that no other process's command line contains: `1000.<random digits>`. */
export function sleepMarker(seconds = 1000): string {
  return `${seconds}.${Date.now() % 1_000_000}${Math.floor(Math.random() * 1_000_000)}`;
}
