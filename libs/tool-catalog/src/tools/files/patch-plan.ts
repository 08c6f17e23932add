import type { StructuredPatch } from "diff";
import { diffLib } from "./lazy-libs.js";

/** One file a patch touches, after deciding create / modify / delete and the clean path. */
export interface PatchedFile {
  path: string;
  action: "create" | "modify" | "delete";
  patch: StructuredPatch;
}

const DEV_NULL = "/dev/null";

function cleanName(name: string | undefined, strip: boolean): string | undefined {
  if (name === undefined || name === DEV_NULL) return undefined;
  const trimmed = name.split("\t")[0]?.trim() ?? "";
  return strip ? trimmed.replace(/^[ab]\//, "") : trimmed;
}

/** Parses a unified diff into per-file changes; throws an Error with a readable message when malformed. */
export async function planPatch(text: string): Promise<PatchedFile[]> {
  const { parsePatch } = await diffLib();
  const patches = parsePatch(text);
  const files: PatchedFile[] = [];
  for (const patch of patches) {
    if (patch.hunks.length === 0 && !patch.isDelete) continue;
    const strip =
      patch.isGit === true ||
      ((patch.oldFileName?.startsWith("a/") || patch.oldFileName === DEV_NULL) &&
        (patch.newFileName?.startsWith("b/") || patch.newFileName === DEV_NULL));
    const oldName = cleanName(patch.oldFileName, strip);
    const newName = cleanName(patch.newFileName, strip);
    if (oldName === undefined && newName === undefined)
      throw new Error("a file section names no file (--- / +++ lines)");
    const action =
      oldName === undefined || patch.isCreate
        ? "create"
        : newName === undefined || patch.isDelete
          ? "delete"
          : "modify";
    if (oldName !== undefined && newName !== undefined && oldName !== newName) {
      throw new Error(`renames are not supported ('${oldName}' → '${newName}'); patch the content and use 'exec' mv`);
    }
    files.push({ path: (newName ?? oldName) as string, action, patch });
  }
  if (files.length === 0) {
    throw new Error("no file changes found; expected unified diff sections ('--- a/file', '+++ b/file', '@@ … @@')");
  }
  const seen = new Set<string>();
  for (const file of files) {
    if (seen.has(file.path)) throw new Error(`'${file.path}' appears twice; put all its hunks in one section`);
    seen.add(file.path);
  }
  return files;
}

/** Applies one file's patch to its content; on failure names the hunks that do not fit. */
export async function applyFilePatch(
  source: string,
  patch: StructuredPatch,
): Promise<{ text: string } | { failedHunks: string[] }> {
  const { applyPatch } = await diffLib();
  const result = applyPatch(source, patch);
  if (result !== false) return { text: result };
  const failedHunks = patch.hunks
    .filter((hunk) => applyPatch(source, { ...patch, hunks: [hunk] }) === false)
    .map((hunk) => `@@ -${hunk.oldStart},${hunk.oldLines} +${hunk.newStart},${hunk.newLines} @@`);
  return { failedHunks: failedHunks.length > 0 ? failedHunks : ["(hunks conflict with each other)"] };
}
