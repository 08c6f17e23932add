import { stat } from "node:fs/promises";
import { fail, type ToolOutcome } from "../../tool.js";
import { readRegularFile } from "./regular-file.js";

/** Reads a UTF-8 text file, or an error outcome saying why it cannot be read as text. */
export async function readTextFile(
  absolute: string,
  display: string,
  maxBytes: number,
  root: string,
): Promise<{ text: string } | { error: ToolOutcome }> {
  let info: Awaited<ReturnType<typeof stat>>;
  try {
    info = await stat(absolute);
  } catch {
    return { error: fail("not-found", `File '${display}' does not exist. Use 'ls' or 'glob' to find it.`) };
  }
  if (info.isDirectory()) return { error: fail("is-directory", `'${display}' is a directory. Use 'ls' to list it.`) };
  if (info.size > maxBytes) {
    return {
      error: fail(
        "too-large",
        `File '${display}' is ${info.size} bytes, more than the ${maxBytes}-byte limit for this tool. Use 'read' with offset/limit, or 'exec' (e.g. sed).`,
      ),
    };
  }
  const bytes = await readRegularFile(absolute, root);
  if (bytes.subarray(0, 8_000).includes(0)) {
    return { error: fail("binary-file", `'${display}' is a binary file; use 'exec' to inspect it.`) };
  }
  return { text: bytes.toString("utf8") };
}

/** Number of non-overlapping occurrences of `needle` in `haystack`. */
export function countOccurrences(haystack: string, needle: string): number {
  if (needle === "") return 0;
  let count = 0;
  let index = haystack.indexOf(needle);
  while (index >= 0) {
    count += 1;
    index = haystack.indexOf(needle, index + needle.length);
  }
  return count;
}

/** 1-based line numbers at which `needle` starts. */
export function lineNumbersOf(haystack: string, needle: string, max = 5): number[] {
  const lines: number[] = [];
  let index = haystack.indexOf(needle);
  while (index >= 0 && lines.length < max) {
    lines.push(haystack.slice(0, index).split("\n").length);
    index = haystack.indexOf(needle, index + needle.length);
  }
  return lines;
}

/** Directories never walked by grep / glob. */
export const IGNORED_DIRECTORIES = ["**/node_modules/**", "**/.git/**"];
