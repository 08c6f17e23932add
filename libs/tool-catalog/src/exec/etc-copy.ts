import { execFile } from "node:child_process";
import { accessSync, constants, existsSync, lstatSync, readdirSync, rmSync, statSync } from "node:fs";
import { chmod, mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);

/**
 * The sandbox's /etc as one directory: a copy of the whitelisted /etc entries
 * (system-layout.ts), bound read-only at /etc with one mount instead of one
 * `--ro-bind-try` per entry. Each bind costs bwrap and the kernel about 0.2 ms
 * of CPU in the new mount namespace: the 24 binds were 4.9 ms of the 10.8 ms a
 * sandboxed `bash -c true` cost (docs/sandbox.md, "The sandbox's /etc").
 *
 * The copy shows what the binds showed: `cp -R -H` follows a whitelisted entry
 * that is a symlink (as a bind mounts its target) and keeps the symlinks inside
 * a whitelisted directory (resolved inside the sandbox, as before); absent
 * entries are left out, modes are kept. Nothing but the whitelist is in it.
 * Its directory is 0755: bwrap, running as the command user, must reach it.
 *
 * It follows the host. A sandbox started QUICK_CHECK_MS or more after the last
 * check has one run right after it (off the call's path): the stat stamps of
 * the entries themselves (a file replaced, an entry added to or taken from a
 * whitelisted directory) and, once per FULL_CHECK_MS, of everything under them
 * (an in-place edit inside a directory, a change in a nested one). When they changed, a new copy is made and later
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
   * directory under `parent`. Rejects when the copy cannot be made: the caller
   * then binds each entry as before.
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
    if (this.checking === undefined && this.now() - this.lastQuick >= EtcCopy.QUICK_CHECK_MS) {
      // After the spawn that asked: the stamps are read while bwrap starts.
      setImmediate(() => this.check().catch(() => {}));
    }
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
   * Compares the host's entries with the copy now (all under them when `full` or
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
    for (const generation of [this.current, ...this.retired]) this.remove(generation);
  }

  private async compareAndCopy(forceFull: boolean): Promise<boolean> {
    if (this.closed) return false;
    const full = forceFull || this.now() - this.lastFull >= EtcCopy.FULL_CHECK_MS;
    this.lastQuick = this.now();
    if (full) this.lastFull = this.lastQuick;
    const stamp = stamps(this.source.entries, full);
    if (full ? stamp.full === this.current.stamp.full : stamp.quick === this.current.stamp.quick) return false;
    const next = await makeCopy(this.source);
    if (this.closed) {
      await rm(dirname(next.dir), { recursive: true, force: true });
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
    rmSync(dirname(generation.dir), { recursive: true, force: true });
  }
}

/**
 * Where the executor makes the copy by default: `$TMPDIR` when it is set,
 * else /dev/shm when it is a writable directory (a tmpfs: creating the
 * copy's ~700 symlinks cost 1.1 ms of CPU each on one VM's ext4 /tmp, a
 * few µs on tmpfs), else the OS temporary directory.
 */
export function defaultEtcCopyParent(env: NodeJS.ProcessEnv = process.env): string {
  if (env.TMPDIR) return env.TMPDIR;
  try {
    accessSync("/dev/shm", constants.W_OK | constants.X_OK);
    if (statSync("/dev/shm").isDirectory()) return "/dev/shm";
  } catch {
    // no writable /dev/shm here
  }
  return tmpdir();
}

interface Source {
  entries: readonly string[];
  etcRoot: string;
  parent: string;
}

interface Generation {
  /** The directory bound at /etc (`<copy>/etc`; the copy's own directory is its parent). */
  dir: string;
  /** What the copy was made from: the entries' stamps (`quick`), and everything's under them too (`full`). */
  stamp: { quick: string; full: string };
  /** Sandboxes started on this copy that still run. */
  users: number;
}

async function makeCopy(source: Source): Promise<Generation> {
  const base = await mkdtemp(join(source.parent, "moniro-sandbox-etc-"));
  try {
    await chmod(base, 0o755);
    // Stamped before copying: a change during the copy makes the next check copy again.
    const { quick, full = "" } = stamps(source.entries, true);
    const stamp = { quick, full };
    const root = dirname(source.etcRoot);
    const present = source.entries.filter((entry) => existsSync(entry)).map((entry) => relativeTo(root, entry));
    const dir = join(base, relativeTo(root, source.etcRoot));
    if (present.length === 0) {
      await mkdir(dir, { mode: 0o755 });
    } else {
      // -H: the entries themselves are followed, what is inside them is not; --parents: <base>/etc/ssl/certs.
      await run("cp", ["-R", "-H", "--preserve=mode,timestamps,links", "--parents", "--", ...present, base], {
        cwd: root,
      });
    }
    return { dir, stamp, users: 0 };
  } catch (error) {
    await rm(base, { recursive: true, force: true });
    throw error;
  }
}

function relativeTo(root: string, entry: string): string {
  const prefix = root.endsWith("/") ? root : `${root}/`;
  if (!entry.startsWith(prefix)) throw new Error(`${entry} is not under ${root}`);
  return entry.slice(prefix.length);
}

function stampOf(path: string, info: { ino: number; size: number; mode: number; mtimeMs: number; ctimeMs: number }) {
  return `${path}:${info.ino}:${info.size}:${info.mode}:${info.mtimeMs}:${info.ctimeMs}`;
}

/**
 * The stamps of the entries themselves, the link and what it points to
 * (`quick`: a file replaced, an entry added to or taken from a whitelisted
 * directory) and, with `all`, of everything under them too (`full`). Read
 * synchronously: over Debian's whitelisted /etc the quick stamps are 48 stat
 * calls (0.2–0.6 ms of CPU), the full ones ~700 (5–16 ms; through promises 40–60 ms).
 */
function stamps(entries: readonly string[], all: boolean): { quick: string; full?: string } {
  const parts: string[] = [];
  const directories: string[] = [];
  for (const entry of entries) {
    try {
      parts.push(stampOf(entry, lstatSync(entry)));
      const info = statSync(entry);
      parts.push(stampOf(entry, info));
      if (info.isDirectory()) directories.push(entry);
    } catch {
      parts.push(`${entry}:absent`);
    }
  }
  const quick = parts.join("\n");
  if (!all) return { quick };
  const under: string[] = [];
  for (const directory of directories) walk(directory, under);
  return { quick, full: `${quick}\n${under.join("\n")}` };
}

function walk(dir: string, parts: string[]): void {
  for (const child of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, child.name);
    parts.push(stampOf(path, lstatSync(path)));
    if (child.isDirectory()) walk(path, parts);
  }
}
