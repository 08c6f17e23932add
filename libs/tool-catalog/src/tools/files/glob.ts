import { stat } from "node:fs/promises";
import { relative } from "node:path";
import { z } from "zod";
import { resolveInWorkspace } from "../../sandbox/workspace-path.js";
import { defineTool, fail, ok } from "../../tool.js";
import { checkPattern, globInside } from "./glob-pattern.js";

const MAX_RESULTS = 500;

export const globTool = defineTool({
  name: "glob",
  description: "Find files by glob pattern (e.g. 'src/**/*.ts'). Returns workspace-relative paths, sorted.",
  input: z.object({
    pattern: z.string().min(1),
    path: z.string().optional().describe("Directory to search, default the workspace root"),
  }),
  async run(input, ctx) {
    const problem = checkPattern(input.pattern);
    if (problem !== undefined) return fail("invalid-glob", problem);
    const base = await resolveInWorkspace(ctx.workspace, input.path ?? ".");
    const info = await stat(base.absolute).catch(() => undefined);
    if (info === undefined || !info.isDirectory()) {
      return fail("not-found", `'${base.display}' is not a directory. Give a directory as path.`);
    }
    const found = await globInside(input.pattern, base.absolute, base.root);
    const paths = found.map((path) => relative(base.root, path)).sort();
    const truncated = paths.length > MAX_RESULTS;
    const shown = paths.slice(0, MAX_RESULTS);
    if (shown.length === 0) return ok({ paths: [], truncated: false }, "No files match.");
    const suffix = truncated ? `\n[… ${paths.length - MAX_RESULTS} more; use a narrower pattern]` : "";
    return ok({ paths: shown, truncated }, shown.join("\n") + suffix);
  },
});
