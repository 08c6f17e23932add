import {
  existsSync,
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
import { describe, expect, it, vi } from "vitest";
import { runTool } from "../../run-tool.js";
import { testToolContext } from "../../test/test-context.js";

/**
 * apply_patch raced by the agent's own background process: it checks and reads every file first and
 * changes them after. `applyFilePatch` runs for each file right after its check and read, so it is
 * where the race is put, deterministically: the file's directory is renamed away and a link to
 * another agent's workspace put in its place, as an inotify watcher does when the tool opens the file.
 */
const race = vi.hoisted(() => ({ checksBeforeSwap: 0, swap: undefined as (() => void) | undefined }));

vi.mock("./patch-plan.js", async (importOriginal) => {
  const original = await importOriginal<typeof import("./patch-plan.js")>();
  return {
    ...original,
    applyFilePatch: (...args: Parameters<typeof original.applyFilePatch>) => {
      race.checksBeforeSwap -= 1;
      if (race.checksBeforeSwap === 0) race.swap?.();
      return original.applyFilePatch(...args);
    },
  };
});

/** A workspace with `d/notes.txt`, whose `d` is swapped after the `checks`-th file of a patch was checked. */
function workspaces(checks: number) {
  const base = mkdtempSync(join(tmpdir(), "moniro-patch-race-"));
  const workspace = join(base, "attacker");
  mkdirSync(join(workspace, "d"), { recursive: true });
  writeFileSync(join(workspace, "d", "notes.txt"), "mine\n");
  mkdirSync(join(base, "victim"));
  writeFileSync(join(base, "victim", "notes.txt"), "victim data\n");
  race.checksBeforeSwap = checks;
  race.swap = () => {
    renameSync(join(workspace, "d"), join(workspace, "d-away"));
    symlinkSync(join(base, "victim"), join(workspace, "d"));
  };
  const ctx = testToolContext({ workspace });
  return { base, ctx, victim: (name: string) => join(base, "victim", name) };
}

describe("apply_patch with a directory swapped for a link out of the workspace after its check", () => {
  it("deletes nothing outside: the delete goes through the checked directory and is refused", async () => {
    const { base, ctx, victim } = workspaces(1);
    const outcome = await runTool(
      "apply_patch",
      { patch: "--- a/d/notes.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-mine\n" },
      ctx,
    );
    expect(outcome).toMatchObject({ isError: true, errorCode: "patch-failed" });
    expect(outcome.content).toContain("outside the workspace");
    expect(readFileSync(victim("notes.txt"), "utf8")).toBe("victim data\n");
    rmSync(base, { recursive: true, force: true });
  });

  it("creates nothing outside: neither the new file nor its directories", async () => {
    const { base, ctx, victim } = workspaces(2);
    const patch = [
      "--- /dev/null",
      "+++ b/d/new.txt",
      "@@ -0,0 +1 @@",
      "+planted",
      "--- /dev/null",
      "+++ b/d/sub/new.txt",
      "@@ -0,0 +1 @@",
      "+planted",
      "",
    ].join("\n");
    const outcome = await runTool("apply_patch", { patch }, ctx);
    expect(outcome).toMatchObject({ isError: true, errorCode: "patch-failed" });
    expect(readFileSync(victim("notes.txt"), "utf8")).toBe("victim data\n");
    expect(existsSync(victim("new.txt"))).toBe(false);
    expect(existsSync(victim("sub"))).toBe(false);
    rmSync(base, { recursive: true, force: true });
  });
});
