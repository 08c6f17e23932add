import { mkdir, stat, writeFile } from "node:fs/promises";
import { dirname } from "node:path";
import { z } from "zod";
import { resolveInWorkspace } from "../../sandbox/workspace-path.js";
import { defineTool, fail, ok } from "../../tool.js";

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
    await mkdir(dirname(target.absolute), { recursive: true });
    await writeFile(target.absolute, input.content, "utf8");
    const bytes = Buffer.byteLength(input.content);
    return ok(
      { path: target.display, bytes, created },
      `${created ? "Created" : "Overwrote"} ${target.display} (${bytes} bytes).`,
    );
  },
});
