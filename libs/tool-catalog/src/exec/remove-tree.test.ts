import {
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { removeTree } from "./remove-tree.js";

/**
 * A shared directory is removed while a member's background process may still run in it. The race
 * is put, deterministically, right after the removal first opens the directory `sub` (whatever its
 * path then): `sub` is renamed away and a link to another agent's workspace put in its place.
 */
const race = vi.hoisted(() => ({
  afterOpening: undefined as string | undefined,
  swap: undefined as (() => void) | undefined,
  beforeListing: undefined as ((path: string) => void) | undefined,
}));

vi.mock("node:fs/promises", async (importOriginal) => {
  const original = await importOriginal<typeof import("node:fs/promises")>();
  return {
    ...original,
    open: async (...args: Parameters<typeof original.open>) => {
      const handle = await original.open(...args);
      if (race.swap && race.afterOpening && String(args[0]).endsWith(`/${race.afterOpening}`)) {
        const swap = race.swap;
        race.swap = undefined;
        swap();
      }
      return handle;
    },
    readdir: async (...args: Parameters<typeof original.readdir>) => {
      race.beforeListing?.(String(args[0]));
      return original.readdir(...args);
    },
  };
});

const made: string[] = [];
afterEach(() => {
  race.swap = undefined;
  race.beforeListing = undefined;
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** `<base>/shared` with files, nested directories and a link out; `<base>/victim` beside it. */
function fixture() {
  const base = mkdtempSync(join(tmpdir(), "moniro-remove-tree-"));
  made.push(base);
  const shared = join(base, "shared");
  mkdirSync(join(shared, "sub", "deeper"), { recursive: true });
  writeFileSync(join(shared, "top.txt"), "x");
  writeFileSync(join(shared, "sub", "a.txt"), "x");
  writeFileSync(join(shared, "sub", "deeper", "b.txt"), "x");
  const victim = join(base, "victim");
  mkdirSync(victim);
  writeFileSync(join(victim, "a.txt"), "victim's");
  writeFileSync(join(victim, "keep.txt"), "victim's");
  symlinkSync(victim, join(shared, "link-out"));
  return { base, shared, victim };
}

describe("removeTree", () => {
  it("removes the tree; a link in it is removed, not followed", async () => {
    const { shared, victim } = fixture();
    await removeTree(shared);
    expect(existsSync(shared)).toBe(false);
    expect(readFileSync(join(victim, "a.txt"), "utf8")).toBe("victim's");
    expect(readFileSync(join(victim, "keep.txt"), "utf8")).toBe("victim's");
  });

  it("does nothing when the path is missing, and removes a link given as the path without following it", async () => {
    const { base, victim } = fixture();
    await removeTree(join(base, "nothing-here"));
    symlinkSync(victim, join(base, "link"));
    await removeTree(join(base, "link"));
    expect(() => lstatSync(join(base, "link"))).toThrow(/ENOENT/);
    expect(readFileSync(join(victim, "a.txt"), "utf8")).toBe("victim's");
  });

  it("deletes nothing outside when a directory in it is swapped for a link out after it was found", async () => {
    const { shared, victim } = fixture();
    race.afterOpening = "sub";
    race.swap = () => {
      renameSync(join(shared, "sub"), join(shared, "sub-away"));
      symlinkSync(victim, join(shared, "sub"));
    };
    await removeTree(shared);
    expect(race.swap, "the race was run").toBeUndefined();
    expect(readFileSync(join(victim, "a.txt"), "utf8")).toBe("victim's");
    expect(readFileSync(join(victim, "keep.txt"), "utf8")).toBe("victim's");
    expect(existsSync(shared)).toBe(false);
  });

  it("gives up with a clear error when entries keep appearing while it empties the directory", async () => {
    const { shared } = fixture();
    let written = 0;
    race.beforeListing = (path) => {
      if (!path.startsWith("/proc/self/fd/")) return;
      // Whatever directory is listed, a process keeps writing into the shared one.
      written += 1;
      writeFileSync(join(shared, `new-${written}.txt`), "x");
    };
    await expect(removeTree(shared)).rejects.toThrow(
      new RegExp(`could not remove ${shared}: entries kept appearing in it .* a process is still writing there`),
    );
  });
});
