import { rmSync } from "node:fs";
import { chmod, cp, lstat, mkdir, mkdtemp, readdir, realpath, rm, stat } from "node:fs/promises";
import { dirname, join } from "node:path";

/**
 * The sandbox's /etc as one directory: a copy of the whitelisted /etc entries
 * (system-layout.ts), bound read-only at /etc with one mount instead of one
 * `--ro-bind-try` per entry. Each bind costs bwrap and the kernel about 0.2 ms
 * of CPU in the new mount namespace: the 24 binds were 4.9 ms of the 10.8 ms a
 * sandboxed `bash -c true` cost (docs/tool-executor.md, "The sandbox's /etc").
 *
 * The copy shows what the binds showed: a whitelisted entry that is a symlink
 * is followed (its target's content is copied, as a bind mounts the target),
 * symlinks inside a whitelisted directory stay symlinks (resolved inside the
 * sandbox, as before), absent entries are left out, modes are kept. Nothing but
 * the whitelist is in it. Its directory is 0755: bwrap, running as the command
 * user, must reach it to bind it.
 *
 * It follows the host. A sandbox started QUICK_CHECK_MS or more after the last
 * check starts one in the background (the call does not wait): the stat stamps
 * of the entries and of every directory under them and, once per FULL_CHECK_MS,
 * of every file (an in-place edit inside a whitelisted directory leaves the
 * directory's stamp alone). When they changed, a new copy is made and later
 * sandboxes bind it. An older copy is deleted once no sandbox started on it
 * runs: a bind shows the directory itself, so deleting its files would empty
 * the /etc of a sandbox still running.
 */
export class EtcCopy {
  static readonly QUICK_CHECK_MS = 5_000;
  static readonly FULL_CHECK_MS = 60_000;

  private current: Generation;
  private readonly retired = new Set<Generation>();
  private checking: Promise<boolean> | undefined;
  private closed = false;
  private lastQuick: number;
  private lastFull: number;

  private constructor(
    private readonly source: Source,
    first: Generation,
    private readonly now: () => number,
  ) {
    this.current = first;
    this.lastQuick = now();
    this.lastFull = this.lastQuick;
  }

  /**
   * Copies `entries` (absolute paths under `etcRoot`, default /etc) into a new
   * directory under `parent` (the executor's temporary directory). Rejects when
   * the copy cannot be made: the caller then binds each entry as before.
   */
  static async create(
    entries: readonly string[],
    parent: string,
    options: { etcRoot?: string; now?: () => number } = {},
  ): Promise<EtcCopy> {
    const source = { entries, etcRoot: options.etcRoot ?? "/etc", parent };
    return new EtcCopy(source, await makeCopy(source), options.now ?? Date.now);
  }

  /** The directory to bind at /etc for one sandbox; `release` once that sandbox is gone. */
  acquire(): { dir: string; release: () => void } {
    const generation = this.current;
    generation.users++;
    if (this.now() - this.lastQuick >= EtcCopy.QUICK_CHECK_MS) this.check().catch(() => {});
    let released = false;
    return {
      dir: generation.dir,
      release: () => {
        if (released) return;
        released = true;
        generation.users--;
        if (generation.users === 0 && this.retired.has(generation)) this.remove(generation);
      },
    };
  }

  /**
   * Compares the host's entries with the copy now (every file when `full` or
   * FULL_CHECK_MS have passed) and makes a new copy when they changed. Resolves
   * true when it did. A check already running is joined, not repeated.
   */
  check(options: { full?: boolean } = {}): Promise<boolean> {
    this.checking ??= this.compareAndCopy(options.full ?? false).finally(() => {
      this.checking = undefined;
    });
    return this.checking;
  }

  /** Deletes every copy (the executor is stopping and its sandboxes are gone). */
  close(): void {
    this.closed = true;
    for (const generation of [this.current, ...this.retired]) rmSync(generation.dir, { recursive: true, force: true });
    this.retired.clear();
  }

  private async compareAndCopy(forceFull: boolean): Promise<boolean> {
    if (this.closed) return false;
    const full = forceFull || this.now() - this.lastFull >= EtcCopy.FULL_CHECK_MS;
    this.lastQuick = this.now();
    if (full) this.lastFull = this.lastQuick;
    const stamp = await stamps(this.source.entries, full);
    if (stamp === (full ? this.current.stamp.full : this.current.stamp.quick)) return false;
    const next = await makeCopy(this.source);
    if (this.closed) {
      await rm(next.dir, { recursive: true, force: true });
      return false;
    }
    const old = this.current;
    this.current = next;
    this.retired.add(old);
    if (old.users === 0) this.remove(old);
    return true;
  }

  private remove(generation: Generation): void {
    this.retired.delete(generation);
    rmSync(generation.dir, { recursive: true, force: true });
  }
}

interface Source {
  entries: readonly string[];
  etcRoot: string;
  parent: string;
}

interface Generation {
  dir: string;
  /** What the copy was made from: the entries' and directories' stamps (`quick`), every file's too (`full`). */
  stamp: { quick: string; full: string };
  /** Sandboxes started on this copy that still run. */
  users: number;
}

async function makeCopy(source: Source): Promise<Generation> {
  const dir = await mkdtemp(join(source.parent, "moniro-sandbox-etc-"));
  try {
    await chmod(dir, 0o755);
    // Stamped before copying: a change during the copy makes the next check copy again.
    const stamp = { quick: await stamps(source.entries, false), full: await stamps(source.entries, true) };
    for (const entry of source.entries) await copyEntry(entry, join(dir, relativeTo(source.etcRoot, entry)));
    return { dir, stamp, users: 0 };
  } catch (error) {
    await rm(dir, { recursive: true, force: true });
    throw error;
  }
}

function relativeTo(root: string, entry: string): string {
  if (!entry.startsWith(`${root}/`)) throw new Error(`${entry} is not under ${root}`);
  return entry.slice(root.length + 1);
}

/** One whitelisted entry, followed when it is a symlink (as a bind follows it); absent: nothing. */
async function copyEntry(entry: string, target: string): Promise<void> {
  let source: string;
  try {
    source = await realpath(entry);
  } catch {
    return;
  }
  // The directories between the copy's root and the entry (ssl for ssl/certs), as bwrap makes them.
  await mkdir(dirname(target), { recursive: true, mode: 0o755 });
  await cp(source, target, { recursive: true, verbatimSymlinks: true, errorOnExist: true, force: false });
}

function stampOf(path: string, info: { ino: bigint; size: bigint; mode: bigint; mtimeNs: bigint; ctimeNs: bigint }) {
  return `${path}:${info.ino}:${info.size}:${info.mode}:${info.mtimeNs}:${info.ctimeNs}`;
}

/** The stamps of the entries (the link and what it points to), of every directory under them and, `full`, of every file. */
async function stamps(entries: readonly string[], full: boolean): Promise<string> {
  const parts: string[] = [];
  for (const entry of entries) {
    try {
      parts.push(stampOf(entry, await lstat(entry, { bigint: true })));
      const info = await stat(entry, { bigint: true });
      parts.push(stampOf(entry, info));
      if (info.isDirectory()) await walk(entry, full, parts);
    } catch {
      parts.push(`${entry}:absent`);
    }
  }
  return parts.join("\n");
}

async function walk(dir: string, full: boolean, parts: string[]): Promise<void> {
  for (const child of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, child.name);
    if (child.isDirectory()) {
      parts.push(stampOf(path, await lstat(path, { bigint: true })));
      await walk(path, full, parts);
    } else if (full) {
      parts.push(stampOf(path, await lstat(path, { bigint: true })));
    }
  }
}
