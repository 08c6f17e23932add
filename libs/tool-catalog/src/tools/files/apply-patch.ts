import { stat } from "node:fs/promises";
import { dirname } from "node:path";
import { z } from "zod";
import { handToCommandUser } from "../../exec/workspace-owner.js";
import { resolveInWorkspace } from "../../sandbox/workspace-path.js";
import { defineTool, fail, ok } from "../../tool.js";
import { makeDirectoriesInside, removeFileInside } from "./checked-directory.js";
import { applyFilePatch, type PatchedFile, planPatch } from "./patch-plan.js";
import { readRegularFile, writeRegularFile } from "./regular-file.js";

interface Change {
  absolute: string;
  root: string;
  display: string;
  action: PatchedFile["action"];
  before: string | undefined;
  after: string | undefined;
}

async function readIfExists(path: string, root: string): Promise<string | undefined> {
  try {
    if ((await stat(path)).isDirectory()) throw new Error(`'${path}' is a directory`);
    return (await readRegularFile(path, root)).toString("utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
}

async function restore(change: Change): Promise<void> {
  if (change.before === undefined) await removeFileInside(change.absolute, change.root, { missingOk: true });
  else await writeRegularFile(change.absolute, change.before, change.root);
}

export const applyPatchTool = defineTool({
  name: "apply_patch",
  description:
    "Apply a unified diff (---/+++/@@ hunks) to one or more workspace files. Atomic: if any hunk does not apply, no file is changed. /dev/null creates or deletes a file.",
  input: z.object({ patch: z.string().min(1).describe("Unified diff text") }),
  async run(input, ctx) {
    let files: PatchedFile[];
    try {
      files = await planPatch(input.patch);
    } catch (error) {
      return fail("patch-invalid", `The patch could not be parsed: ${(error as Error).message}.`);
    }
    // Phase 1: compute every new content in memory; nothing is written until all fit.
    const changes: Change[] = [];
    const problems: string[] = [];
    for (const file of files) {
      const target = await resolveInWorkspace(ctx.workspace, file.path);
      const before = await readIfExists(target.absolute, target.root);
      if (file.action === "create" && before !== undefined) {
        problems.push(`${target.display}: already exists (the patch creates it from /dev/null)`);
        continue;
      }
      if (file.action !== "create" && before === undefined) {
        problems.push(`${target.display}: does not exist`);
        continue;
      }
      const applied = await applyFilePatch(before ?? "", file.patch);
      if ("failedHunks" in applied) {
        problems.push(`${target.display}: hunk ${applied.failedHunks.join(", ")} does not match the file`);
        continue;
      }
      const after = file.action === "delete" ? undefined : applied.text;
      changes.push({
        absolute: target.absolute,
        root: target.root,
        display: target.display,
        action: file.action,
        before,
        after,
      });
    }
    if (problems.length > 0) {
      return fail(
        "patch-failed",
        `Patch not applied; no file was changed. ${problems.join("; ")}. Read the current file content and regenerate the patch (or use 'edit').`,
        { data: { problems } },
      );
    }
    // Phase 2: write; on an I/O failure put back what was already written.
    const done: Change[] = [];
    try {
      for (const change of changes) {
        if (change.after === undefined) await removeFileInside(change.absolute, change.root);
        else {
          await makeDirectoriesInside(dirname(change.absolute), change.root);
          await writeRegularFile(change.absolute, change.after, change.root);
          // Sandboxed commands run as another user when the executor is root: they must be able to change it.
          if (change.before === undefined) await handToCommandUser(ctx.limits, change.root, change.absolute);
        }
        done.push(change);
      }
    } catch (error) {
      for (const change of done.reverse()) await restore(change).catch(() => {});
      return fail("patch-failed", `Writing failed (${(error as Error).message}); every file was restored.`);
    }
    const summary = changes.map((change) => ({ path: change.display, action: change.action }));
    return ok(
      { files: summary },
      `Patched ${changes.length} file(s): ${summary.map((file) => `${file.action} ${file.path}`).join(", ")}.`,
    );
  },
});
