import {
  chownSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { execLimits } from "../limits.js";
import { handToCommandUser } from "./workspace-owner.js";

/**
 * The executor runs as root and commands as another user: before a command, and after a file tool
 * wrote, the workspace path is handed to that user. The agent's own background process may swap a
 * directory on the way for a link out of the workspace at any moment; the race is put,
 * deterministically, right after the walk first touches that directory (whatever call it uses).
 */
const race = vi.hoisted(() => ({
  directory: undefined as string | undefined,
  swap: undefined as (() => void) | undefined,
}));

vi.mock("node:fs", async (importOriginal) => {
  const original = await importOriginal<typeof import("node:fs")>();
  const raced =
    <F extends (...args: never[]) => unknown>(fn: F) =>
    (...args: Parameters<F>) => {
      const result = fn(...args);
      const path = args[0] as unknown;
      if (race.swap && typeof path === "string" && race.directory && path.endsWith(`/${race.directory}`)) {
        const swap = race.swap;
        race.swap = undefined;
        swap();
      }
      return result;
    };
  return {
    ...original,
    lstatSync: raced(original.lstatSync),
    statSync: raced(original.statSync),
    openSync: raced(original.openSync),
  };
});

const user = { uid: 65534, gid: 65534 };
const limits = execLimits({ runAs: user });
const made: string[] = [];
afterEach(() => {
  race.swap = undefined;
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function base(): string {
  const dir = mkdtempSync(join(tmpdir(), "moniro-owner-"));
  made.push(dir);
  return dir;
}

describe("handToCommandUser (the executor as root)", () => {
  it("hands the target and the directories down to it to the command user, and leaves a link alone", async () => {
    if (process.getuid?.() !== 0) return; // only root can hand files to another user
    const dir = base();
    const workspace = join(dir, "agent");
    mkdirSync(join(workspace, "a", "b"), { recursive: true });
    writeFileSync(join(workspace, "a", "b", "notes.txt"), "x");
    writeFileSync(join(dir, "outside.txt"), "secret");
    symlinkSync(join(dir, "outside.txt"), join(workspace, "link"));

    await handToCommandUser(limits, workspace, join(workspace, "a", "b", "notes.txt"));
    await handToCommandUser(limits, workspace, join(workspace, "link"));

    for (const path of ["", "a", "a/b", "a/b/notes.txt"]) {
      expect(statSync(join(workspace, path)), path || "the workspace").toMatchObject(user);
    }
    expect(lstatSync(join(workspace, "link")).uid).toBe(0);
    expect(statSync(join(dir, "outside.txt")).uid).toBe(0);
  });

  it("hands nothing outside when a directory on the way is swapped for a link out of the workspace", async () => {
    if (process.getuid?.() !== 0) return;
    const dir = base();
    const workspace = join(dir, "agent");
    mkdirSync(join(workspace, "d"), { recursive: true });
    writeFileSync(join(workspace, "d", "shadow"), "mine");
    mkdirSync(join(dir, "victim"));
    writeFileSync(join(dir, "victim", "shadow"), "root's secret");
    chownSync(join(workspace, "d", "shadow"), 0, 0);
    race.directory = "d";
    race.swap = () => {
      renameSync(join(workspace, "d"), join(workspace, "d-away"));
      symlinkSync(join(dir, "victim"), join(workspace, "d"));
    };

    await handToCommandUser(limits, workspace, join(workspace, "d", "shadow"));

    expect(race.swap, "the race was run").toBeUndefined();
    expect(statSync(join(dir, "victim", "shadow"))).toMatchObject({ uid: 0, gid: 0 });
    expect(statSync(join(dir, "victim"))).toMatchObject({ uid: 0, gid: 0 });
  });

  it("refuses a target outside the workspace", async () => {
    if (process.getuid?.() !== 0) return;
    const dir = base();
    mkdirSync(join(dir, "agent"));
    await expect(handToCommandUser(limits, join(dir, "agent"), join(dir, "other"))).rejects.toThrow(
      /not inside the workspace/,
    );
  });
});
