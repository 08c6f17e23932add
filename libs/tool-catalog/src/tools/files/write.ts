import { stat } from "node:fs/promises";
import { dirname, relative } from "node:path";
import { z } from "zod";
import { handToCommandUser } from "../../exec/workspace-owner.js";
import { resolveInWorkspace } from "../../sandbox/workspace-path.js";
import { defineTool, fail, ok } from "../../tool.js";
import { makeDirectoriesInside } from "./checked-directory.js";
import { writeRegularFile } from "./regular-file.js";

export const writeTool = defineTool({
  name: "write",
  description:
    "Create or overwrite a file in the workspace (parent directories are created). Prefer 'edit' for changes.",
  input: z.object({
    path: z.string().min(1).describe("Path relative to the workspace"),
    content: z.string(),
  }),
  async run(input, ctx) {
    const target = await resolveInWorkspace(ctx.workspace, input.path);
    let created = true;
    try {
      const info = await stat(target.absolute);
      if (info.isDirectory()) return fail("is-directory", `'${target.display}' is a directory; give a file path.`);
      created = false;
    } catch {}
    try {
      await makeDirectoriesInside(dirname(target.absolute), target.root);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code !== "EEXIST" && code !== "ENOTDIR") throw error;
      const blocker = relative(target.root, await nearestNonDirectory(dirname(target.absolute)));
      return fail(
        "not-a-directory",
        `'${blocker}' is a file, so '${target.display}' cannot be created under it. Write to another path, or remove '${blocker}' first.`,
      );
    }
    await writeRegularFile(target.absolute, input.content, target.root);
    // Sandboxed commands run as another user when the executor is root: they must be able to change it.
    await handToCommandUser(ctx.limits, target.root, target.absolute);
    const bytes = Buffer.byteLength(input.content);
    return ok(
      { path: target.display, bytes, created },
      `${created ? "Created" : "Overwrote"} ${target.display} (${bytes} bytes).`,
    );
  },
});

/** The ancestor of `path` (or `path` itself) that exists but is not a directory. */
async function nearestNonDirectory(path: string): Promise<string> {
  let candidate = path;
  for (;;) {
    const info = await stat(candidate).catch(() => undefined);
    if (info !== undefined && !info.isDirectory()) return candidate;
    const parent = dirname(candidate);
    if (parent === candidate) return path;
    candidate = parent;
  }
}
