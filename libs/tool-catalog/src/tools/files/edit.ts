import { z } from "zod";
import { resolveInWorkspace } from "../../sandbox/workspace-path.js";
import { defineTool, fail, ok } from "../../tool.js";
import { countOccurrences, lineNumbersOf, readTextFile } from "./file-helpers.js";
import { writeRegularFile } from "./regular-file.js";

const MAX_EDIT_BYTES = 10 * 1024 * 1024;

export const editTool = defineTool({
  name: "edit",
  description:
    "Replace exact text in a file. old_string must occur exactly once (include surrounding lines to make it unique), or set replace_all.",
  input: z.object({
    path: z.string().min(1),
    old_string: z.string().min(1).describe("Exact text to replace, whitespace included"),
    new_string: z.string(),
    replace_all: z.boolean().optional().describe("Replace every occurrence"),
  }),
  async run(input, ctx) {
    const target = await resolveInWorkspace(ctx.workspace, input.path);
    if (input.old_string === input.new_string) {
      return fail("no-change", "old_string and new_string are identical; nothing to do.");
    }
    const file = await readTextFile(target.absolute, target.display, MAX_EDIT_BYTES, target.root);
    if ("error" in file) return file.error;
    const count = countOccurrences(file.text, input.old_string);
    if (count === 0) {
      return fail(
        "no-match",
        `old_string was not found in ${target.display}. Read the file again and copy the text exactly (whitespace and indentation included).`,
      );
    }
    if (count > 1 && !input.replace_all) {
      return fail(
        "ambiguous-match",
        `old_string occurs ${count} times in ${target.display} (lines ${lineNumbersOf(file.text, input.old_string).join(", ")}). Add surrounding lines to make it unique, or set replace_all: true.`,
        { data: { matches: count } },
      );
    }
    const updated = input.replace_all
      ? file.text.split(input.old_string).join(input.new_string)
      : file.text.replace(input.old_string, () => input.new_string);
    await writeRegularFile(target.absolute, updated, target.root);
    return ok({ path: target.display, replacements: count }, `Edited ${target.display}: ${count} replacement(s).`);
  },
});
