import { spawn } from "node:child_process";
import { CliError } from "./cli-errors.js";

/** The user's editor: $VISUAL, else $EDITOR, else vi. */
export function editorOf(env: Record<string, string | undefined> = process.env): string {
  return env.VISUAL?.trim() || env.EDITOR?.trim() || "vi";
}

/** Runs the editor on `file` on this terminal (the command may carry arguments, as `code --wait`). */
export async function runEditor(file: string, env: Record<string, string | undefined> = process.env): Promise<void> {
  const editor = editorOf(env);
  const code = await new Promise<number | null>((resolve, reject) => {
    const child = spawn(`${editor} "$MONIRO_EDIT_FILE"`, {
      shell: true,
      stdio: "inherit",
      env: { ...env, MONIRO_EDIT_FILE: file },
    });
    child.on("error", reject);
    child.on("exit", (exit) => resolve(exit));
  });
  if (code !== 0) {
    throw new CliError(
      `the editor (${editor}) exited with ${code ?? "a signal"}: nothing applied; set EDITOR to your editor`,
    );
  }
}
