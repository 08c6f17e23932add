import { stat } from "node:fs/promises";
import { createInterface } from "node:readline";
import { z } from "zod";
import { resolveInWorkspace } from "../../sandbox/workspace-path.js";
import { defineTool, fail, ok } from "../../tool.js";
import { openRegularForReading } from "./regular-file.js";

const MAX_LINE = 2_000;

export const readTool = defineTool({
  name: "read",
  description:
    "Read a text file from the workspace. Lines are numbered. Large files: pass offset/limit to read a range.",
  input: z.object({
    path: z.string().min(1).describe("Path relative to the workspace"),
    offset: z.number().int().min(1).optional().describe("First line (1-based)"),
    limit: z.number().int().min(1).max(5_000).optional().describe("Number of lines, default 2000"),
  }),
  async run(input, ctx) {
    const target = await resolveInWorkspace(ctx.workspace, input.path);
    let size: number;
    try {
      const info = await stat(target.absolute);
      if (info.isDirectory()) return fail("is-directory", `'${target.display}' is a directory. Use 'ls' to list it.`);
      size = info.size;
    } catch {
      return fail("not-found", `File '${target.display}' does not exist. Use 'ls' or 'glob' to find it.`);
    }
    const first = input.offset ?? 1;
    const limit = input.limit ?? 2_000;
    const cap = ctx.limits.readMaxBytes;
    const out: string[] = [];
    let lineNumber = 0;
    let bytes = 0;
    let cut = false;
    let binary = false;
    const stream = (await openRegularForReading(target.absolute, target.root)).createReadStream({ encoding: "utf8" });
    const lines = createInterface({ input: stream, crlfDelay: Infinity });
    for await (const raw of lines) {
      lineNumber += 1;
      if (lineNumber === 1 && raw.slice(0, 8_000).includes("\0")) {
        binary = true;
        break;
      }
      if (lineNumber < first) continue;
      if (out.length >= limit) {
        cut = true;
        break;
      }
      const line = raw.length > MAX_LINE ? `${raw.slice(0, MAX_LINE)}… [line cut at ${MAX_LINE} chars]` : raw;
      bytes += line.length + 8;
      if (bytes > cap) {
        cut = true;
        break;
      }
      out.push(`${String(lineNumber).padStart(6)}\t${line}`);
    }
    lines.close();
    // Stopped early (a line limit, a binary file): the stream closes its descriptor now, not at the next GC.
    stream.destroy();
    if (binary) return fail("binary-file", `'${target.display}' is a binary file; use 'exec' to inspect it.`);
    if (lineNumber < first && size > 0) {
      return fail("out-of-range", `'${target.display}' has only ${lineNumber} lines; offset ${first} is past the end.`);
    }
    const last = first + out.length - 1;
    let content = out.join("\n");
    if (size === 0) content = "(empty file)";
    if (cut) content += `\n[… more lines; continue with offset ${last + 1}]`;
    return ok({ path: target.display, firstLine: first, lastLine: last, truncated: cut }, content);
  },
});
