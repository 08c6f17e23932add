import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";

// Issue 13, "Docs": a README that lists files lists only files that exist.
// Two rules, for every README.md of the repository:
// - a file named in the first column of a table (the READMEs' "file | what"
//   tables) exists next to the README or under its src/;
// - a Redis script named anywhere (`releaseIdle-5.lua`) exists in libs/store/lua.

const ROOT = resolve(import.meta.dirname, "..", "..");
const SKIP = new Set(["node_modules", "dist", ".git", "coverage"]);

function readmes(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    if (SKIP.has(entry.name) || entry.name.startsWith(".")) return [];
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return readmes(path);
    return entry.name === "README.md" ? [path] : [];
  });
}

/** Backticked file names (`x.ts`, `y/z.json`) in `text`. */
const fileNames = (text: string) =>
  [...text.matchAll(/`([A-Za-z0-9_./-]+\.(?:ts|js|mjs|json|lua|yaml))`/g)].map((match) => match[1] as string);

const FILES = readmes(ROOT);
const SCRIPTS = new Set(readdirSync(join(ROOT, "libs", "store", "lua")));

describe("the files READMEs name exist", () => {
  it("finds the READMEs", () => {
    expect(FILES.map((file) => relative(ROOT, file))).toEqual(
      expect.arrayContaining(["README.md", "services/agent-runner/src/runtime/README.md", "libs/api/README.md"]),
    );
  });

  it("every file in the first column of a README table exists next to it (or under its src/)", () => {
    const missing: string[] = [];
    for (const readme of FILES) {
      const dir = dirname(readme);
      readFileSync(readme, "utf8")
        .split("\n")
        .forEach((line, index) => {
          const firstCell = /^\s*\|([^|]*)\|/.exec(line)?.[1];
          if (!firstCell) return;
          for (const name of fileNames(firstCell)) {
            if (!existsSync(join(dir, name)) && !existsSync(join(dir, "src", name))) {
              missing.push(`${relative(ROOT, readme)}:${index + 1}: ${name}`);
            }
          }
        });
    }
    expect(missing).toEqual([]);
  });

  it("every Redis script a README names is in libs/store/lua", () => {
    const missing = FILES.flatMap((readme) =>
      fileNames(readFileSync(readme, "utf8"))
        .filter((name) => name.endsWith(".lua") && !SCRIPTS.has(name.split("/").at(-1) as string))
        .map((name) => `${relative(ROOT, readme)}: ${name}`),
    );
    expect(missing).toEqual([]);
  });
});
