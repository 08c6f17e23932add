import { lstat, readdir } from "node:fs/promises";
import { join } from "node:path";
import { z } from "zod";
import { resolveInWorkspace } from "../../sandbox/workspace-path.js";
import { defineTool, fail, ok } from "../../tool.js";

const MAX_ENTRIES = 500;

export const lsTool = defineTool({
  name: "ls",
  description: "List a workspace directory: name, type (file/dir/link), size in bytes.",
  input: z.object({ path: z.string().optional().describe("Directory, default the workspace root") }),
  async run(input, ctx) {
    const target = await resolveInWorkspace(ctx.workspace, input.path ?? ".");
    let names: string[];
    try {
      names = (await readdir(target.absolute)).sort();
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === "ENOTDIR") return fail("not-a-directory", `'${target.display}' is a file; use 'read'.`);
      return fail("not-found", `'${target.display}' does not exist.`);
    }
    const entries = [];
    for (const name of names.slice(0, MAX_ENTRIES)) {
      const info = await lstat(join(target.absolute, name)).catch(() => undefined);
      if (info === undefined) continue;
      const type = info.isSymbolicLink() ? "link" : info.isDirectory() ? "dir" : "file";
      entries.push({ name, type, size: info.size });
    }
    const lines = entries.map((e) =>
      e.type === "dir" ? `${e.name}/` : `${e.name}${e.type === "link" ? " ->" : ""}\t${e.size}`,
    );
    if (names.length > MAX_ENTRIES) lines.push(`[… ${names.length - MAX_ENTRIES} more entries]`);
    return ok({ path: target.display, entries }, lines.length === 0 ? "(empty directory)" : lines.join("\n"));
  },
});
