import { lstat } from "node:fs/promises";
import { relative } from "node:path";
import { CHILD_SEPARATOR } from "@moniro/envelopes";
import { z } from "zod";
import { resolveInWorkspace } from "../../sandbox/workspace-path.js";
import { defineTool, fail, ok } from "../../tool.js";
import { checkPattern, globInside } from "./glob-pattern.js";
import { matchingLines, RegexTimeoutError } from "./regex-worker.js";
import { readRegularFile } from "./regular-file.js";

const MAX_FILE_BYTES = 2 * 1024 * 1024;

export const grepTool = defineTool({
  name: "grep",
  description:
    "Search file contents with a JavaScript regex. Returns path:line:text (context lines use '-'). Skips binary files, .git and node_modules.",
  input: z.object({
    pattern: z.string().min(1).describe("Regular expression"),
    path: z.string().optional().describe("File or directory, default the workspace root"),
    glob: z.string().optional().describe("Only files matching this glob, e.g. '**/*.ts'"),
    ignore_case: z.boolean().optional(),
    context: z.number().int().min(0).max(10).optional().describe("Lines of context around each match"),
    max_results: z.number().int().min(1).max(1_000).optional().describe("Default 100"),
  }),
  async run(input, ctx) {
    try {
      // Checked here, run in the regex worker (regex-worker.ts).
      new RegExp(input.pattern, input.ignore_case ? "i" : "");
    } catch (error) {
      return fail(
        "invalid-regex",
        `Invalid regular expression: ${(error as Error).message}. Escape special characters.`,
      );
    }
    const globError = input.glob === undefined ? undefined : checkPattern(input.glob);
    if (globError !== undefined) return fail("invalid-glob", globError);
    const target = await resolveInWorkspace(ctx.workspace, input.path ?? ".");
    let files: string[];
    try {
      const info = await lstat(target.absolute);
      files = info.isDirectory()
        ? (await globInside(input.glob ?? "**/*", target.absolute, target.root)).sort()
        : [target.absolute];
    } catch {
      return fail("not-found", `'${target.display}' does not exist. Use 'ls' or 'glob' to find it.`);
    }
    const flags = input.ignore_case ? "i" : "";
    // The pattern's running time over all files (waiting for a regex worker does not count).
    let budgetLeft = ctx.limits.grepRegexMs;
    const max = input.max_results ?? 100;
    const context = input.context ?? 0;
    const out: string[] = [];
    let matches = 0;
    let truncated = false;
    for (const file of files) {
      if (ctx.signal.aborted || truncated) break;
      const info = await lstat(file).catch(() => undefined);
      if (info === undefined || !info.isFile() || info.size > MAX_FILE_BYTES) continue;
      const bytes = await readRegularFile(file, target.root).catch(() => undefined);
      if (bytes === undefined) continue;
      if (bytes.subarray(0, 8_000).includes(0)) continue;
      const text = bytes.toString("utf8");
      const name = relative(target.root, file);
      let matching: number[];
      try {
        // An agent and its sub-agents (`<parent>--<id>`) share one worker at a time.
        const owner = ctx.agent.split(CHILD_SEPARATOR)[0] ?? ctx.agent;
        const result = await matchingLines(owner, input.pattern, flags, text, Math.max(1, budgetLeft), ctx.signal);
        matching = result.lines;
        budgetLeft -= result.ranMs;
      } catch (error) {
        if (!(error instanceof RegexTimeoutError)) throw error;
        return fail(
          "regex-too-slow",
          `The regular expression ran longer than ${ctx.limits.grepRegexMs} ms (reached in '${name}'): it backtracks too much, as nested quantifiers like (a+)+ do. Simplify it, or narrow the path or glob.`,
        );
      }
      if (matching.length === 0) continue;
      const lines = text.split("\n");
      const matched = new Set(matching);
      let printedUpTo = -1;
      for (const index of matching) {
        if (matches >= max) {
          truncated = true;
          break;
        }
        matches += 1;
        const from = Math.max(printedUpTo + 1, index - context);
        const to = Math.min(lines.length - 1, index + context);
        if (context > 0 && printedUpTo >= 0 && from > printedUpTo + 1) out.push("--");
        for (let line = from; line <= to; line += 1) {
          const separator = matched.has(line) ? ":" : "-";
          out.push(`${name}${separator}${line + 1}${separator}${(lines[line] as string).slice(0, 500)}`);
        }
        printedUpTo = to;
      }
    }
    if (matches === 0) return ok({ matches: 0, truncated: false }, "No matches.");
    if (truncated) out.push(`[… stopped at ${max} matches; narrow the pattern, path or glob]`);
    return ok({ matches, truncated }, out.join("\n"));
  },
});
