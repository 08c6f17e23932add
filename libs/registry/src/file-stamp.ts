import type { BigIntStats } from "node:fs";

/**
 * How long after its last change a file's stamp is not trusted. Linux takes
 * file times from a coarse clock (one tick, up to 10 ms), so two writes of the
 * same size within a tick can leave inode, size, mtime and ctime all equal; a
 * pass that read the first would keep it. A file changed this recently is read
 * on every pass until it is older ("racy git" has the same rule).
 */
export const STAMP_SETTLED_MS = 2_000;

/**
 * What says a file is unchanged without reading it: its inode, size, and the
 * nanoseconds of its last content (mtime) and status (ctime) change. A rename
 * over it (an editor's save, a Kubernetes ConfigMap's symlink swap) gives
 * another inode; a write moves ctime, which no user can set back. Undefined
 * while the file changed less than `settledMs` before `now`.
 */
export function fileStamp(stats: BigIntStats, now: number, settledMs: number = STAMP_SETTLED_MS): string | undefined {
  if (Number(stats.ctimeMs) > now - settledMs || Number(stats.mtimeMs) > now - settledMs) return undefined;
  return `${stats.ino}:${stats.size}:${stats.mtimeNs}:${stats.ctimeNs}`;
}
