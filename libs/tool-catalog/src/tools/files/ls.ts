import { type FileHandle, lstat, readdir } from "node:fs/promises";
import { z } from "zod";
import { PathOutsideWorkspaceError } from "../../errors.js";
import { resolveInWorkspace } from "../../sandbox/workspace-path.js";
import { defineTool, fail, ok } from "../../tool.js";
import { entryIn, openDirectoryInside } from "./checked-directory.js";

const MAX_ENTRIES = 500;

export const lsTool = defineTool({
  name: "ls",
  description: "List a workspace directory: name, type (file/dir/link), size in bytes.",
  input: z.object({ path: z.string().optional().describe("Directory, default the workspace root") }),
  async run(input, ctx) {
    const target = await resolveInWorkspace(ctx.workspace, input.path ?? ".");
    // Listed through the opened, checked directory: a directory swapped for a link out meanwhile is refused.
    let directory: FileHandle;
    try {
      directory = await openDirectoryInside(target.absolute, target.root);
    } catch (error) {
      if (error instanceof PathOutsideWorkspaceError) throw error;
      const code = (error as NodeJS.ErrnoException).code;
      if (code === "ENOTDIR") return fail("not-a-directory", `'${target.display}' is a file; use 'read'.`);
      return fail("not-found", `'${target.display}' does not exist.`);
    }
    let names: string[] = [];
    const entries = [];
    try {
      names = (await readdir(entryIn(directory))).sort();
      for (const name of names.slice(0, MAX_ENTRIES)) {
        const info = await lstat(entryIn(directory, name)).catch(() => undefined);
        if (info === undefined) continue;
        const type = info.isSymbolicLink() ? "link" : info.isDirectory() ? "dir" : "file";
        entries.push({ name, type, size: info.size });
      }
    } finally {
      await directory.close();
    }
    const lines = entries.map((e) =>
      e.type === "dir" ? `${e.name}/` : `${e.name}${e.type === "link" ? " ->" : ""}\t${e.size}`,
    );
    if (names.length > MAX_ENTRIES) lines.push(`[… ${names.length - MAX_ENTRIES} more entries]`);
    return ok({ path: target.display, entries }, lines.length === 0 ? "(empty directory)" : lines.join("\n"));
  },
});
