import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { PathOutsideWorkspaceError } from "../../errors.js";
import { runTool } from "../../run-tool.js";
import { testToolContext } from "../../test/test-context.js";
import { makeDirectoriesInside, removeFileInside } from "./checked-directory.js";
import { globInside } from "./glob-pattern.js";
import { readRegularFile, writeRegularFile } from "./regular-file.js";

function workspaceWith(files: Record<string, string>) {
  const ctx = testToolContext({ limits: { readMaxBytes: 2_000 } });
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(join(ctx.workspace, path, ".."), { recursive: true });
    writeFileSync(join(ctx.workspace, path), content);
  }
  const file = (path: string) => readFileSync(join(ctx.workspace, path), "utf8");
  return { ctx, file };
}

describe("read", () => {
  it("numbers lines and reads a range", async () => {
    const { ctx } = workspaceWith({ "a.txt": "one\ntwo\nthree\nfour\n" });
    const all = await runTool("read", { path: "a.txt" }, ctx);
    expect(all.isError).toBeUndefined();
    expect(all.content).toContain("     1\tone");
    const range = await runTool("read", { path: "a.txt", offset: 2, limit: 2 }, ctx);
    expect(range.content).toBe("     2\ttwo\n     3\tthree\n[… more lines; continue with offset 4]");
    expect(range.data).toMatchObject({ firstLine: 2, lastLine: 3, truncated: true });
  });

  it("caps the returned size and says how to continue", async () => {
    const { ctx } = workspaceWith({ "big.txt": `${"x".repeat(90)}\n`.repeat(100) });
    const outcome = await runTool("read", { path: "big.txt" }, ctx);
    expect(outcome.content).toMatch(/continue with offset \d+\]$/);
    expect(outcome.content.length).toBeLessThan(2_500);
  });

  it("explains a missing file, a directory, a binary file and an offset past the end", async () => {
    const { ctx } = workspaceWith({ "a.txt": "one\n", "dir/x": "", "bin.dat": "ab\0cd" });
    const cases: [Record<string, unknown>, string, string][] = [
      [{ path: "nope.txt" }, "not-found", "File 'nope.txt' does not exist. Use 'ls' or 'glob' to find it."],
      [{ path: "dir" }, "is-directory", "'dir' is a directory. Use 'ls' to list it."],
      [{ path: "bin.dat" }, "binary-file", "'bin.dat' is a binary file; use 'exec' to inspect it."],
      [{ path: "a.txt", offset: 5 }, "out-of-range", "'a.txt' has only 1 lines; offset 5 is past the end."],
    ];
    for (const [input, errorCode, content] of cases) {
      expect(await runTool("read", input, ctx), JSON.stringify(input)).toMatchObject({
        isError: true,
        errorCode,
        content,
      });
    }
  });
});

describe("a FIFO (or another non-regular file) in the workspace", () => {
  it("is refused by read, edit, write, apply_patch and skipped by grep, at once, not waited on", async () => {
    const { ctx } = workspaceWith({ "a.txt": "needle\n" });
    execFileSync("mkfifo", [join(ctx.workspace, "f")]);
    const refusal = "'f' is not a regular file";
    const calls: Array<[string, Record<string, unknown>]> = [
      ["read", { path: "f" }],
      ["edit", { path: "f", old_string: "a", new_string: "b" }],
      ["write", { path: "f", content: "x" }],
      ["apply_patch", { patch: "--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\n+b\n" }],
    ];
    // Five at once: more than libuv's four thread-pool threads, which a blocking open() would all hold.
    const outcomes = await Promise.all(
      [...calls, calls[0] as [string, Record<string, unknown>]].map(([tool, input]) => runTool(tool, input, ctx)),
    );
    for (const outcome of outcomes) {
      expect(outcome).toMatchObject({ isError: true });
      expect(outcome.content).toContain(refusal);
    }
    const grep = await runTool("grep", { pattern: "needle" }, ctx);
    expect(grep.content).toBe("a.txt:1:needle");
  });
});

describe("a directory swapped for a link out of the workspace after the path was resolved", () => {
  it("is caught on the opened descriptor: nothing outside is read or overwritten", async () => {
    const base = mkdtempSync(join(tmpdir(), "moniro-swap-"));
    const workspace = join(base, "attacker");
    mkdirSync(workspace);
    mkdirSync(join(base, "victim"));
    writeFileSync(join(base, "victim", "x"), "victim data\n");
    // What a racing command leaves between the tool's check and its open: 'd' now a link to the victim.
    symlinkSync(join(base, "victim"), join(workspace, "d"));
    const path = join(workspace, "d", "x");
    await expect(readRegularFile(path, workspace)).rejects.toBeInstanceOf(PathOutsideWorkspaceError);
    await expect(writeRegularFile(path, "pwned", workspace)).rejects.toBeInstanceOf(PathOutsideWorkspaceError);
    expect(readFileSync(join(base, "victim", "x"), "utf8")).toBe("victim data\n");
    // Inside the workspace the same calls work.
    await writeRegularFile(join(workspace, "own.txt"), "mine", workspace);
    expect((await readRegularFile(join(workspace, "own.txt"), workspace)).toString()).toBe("mine");
    rmSync(base, { recursive: true, force: true });
  });

  it("is caught on the opened parent directory: nothing outside is deleted or created", async () => {
    const base = mkdtempSync(join(tmpdir(), "moniro-swap-"));
    const workspace = join(base, "attacker");
    mkdirSync(workspace);
    mkdirSync(join(base, "victim"));
    writeFileSync(join(base, "victim", "x"), "victim data\n");
    symlinkSync(join(base, "victim"), join(workspace, "d"));
    await expect(removeFileInside(join(workspace, "d", "x"), workspace)).rejects.toBeInstanceOf(
      PathOutsideWorkspaceError,
    );
    expect(readFileSync(join(base, "victim", "x"), "utf8")).toBe("victim data\n");
    await expect(writeRegularFile(join(workspace, "d", "new.txt"), "", workspace)).rejects.toBeInstanceOf(
      PathOutsideWorkspaceError,
    );
    expect(existsSync(join(base, "victim", "new.txt"))).toBe(false);
    await expect(makeDirectoriesInside(join(workspace, "d", "sub", "deeper"), workspace)).rejects.toBeInstanceOf(
      PathOutsideWorkspaceError,
    );
    expect(existsSync(join(base, "victim", "sub"))).toBe(false);
    // Inside the workspace the same calls work.
    await makeDirectoriesInside(join(workspace, "own", "sub"), workspace);
    writeFileSync(join(workspace, "own", "sub", "y"), "");
    await removeFileInside(join(workspace, "own", "sub", "y"), workspace);
    expect(existsSync(join(workspace, "own", "sub", "y"))).toBe(false);
    await removeFileInside(join(workspace, "own", "sub", "y"), workspace, { missingOk: true });
    rmSync(base, { recursive: true, force: true });
  });
});

describe("write", () => {
  it("creates parents, then overwrites", async () => {
    const { ctx, file } = workspaceWith({});
    const created = await runTool("write", { path: "deep/dir/f.txt", content: "v1" }, ctx);
    expect(created.data).toMatchObject({ path: "deep/dir/f.txt", created: true, bytes: 2 });
    const again = await runTool("write", { path: "deep/dir/f.txt", content: "v2" }, ctx);
    expect(again.data).toMatchObject({ created: false });
    expect(file("deep/dir/f.txt")).toBe("v2");
  });

  it("refuses a directory and a path under a file with an error result saying what to do, writing nothing", async () => {
    const { ctx, file } = workspaceWith({ "dir/x": "", "a.txt": "keep" });
    const onDirectory = await runTool("write", { path: "dir", content: "v" }, ctx);
    expect(onDirectory).toMatchObject({ isError: true, errorCode: "is-directory" });
    expect(onDirectory.content).toBe("'dir' is a directory; give a file path.");
    const underFile = await runTool("write", { path: "a.txt/deeper/b.txt", content: "v" }, ctx);
    expect(underFile).toMatchObject({ isError: true, errorCode: "not-a-directory" });
    expect(underFile.content).toBe(
      "'a.txt' is a file, so 'a.txt/deeper/b.txt' cannot be created under it. Write to another path, or remove 'a.txt' first.",
    );
    expect(file("a.txt")).toBe("keep");
  });
});

describe("edit", () => {
  it("replaces a unique match", async () => {
    const { ctx, file } = workspaceWith({ "a.ts": "const a = 1;\nconst b = 2;\n" });
    const outcome = await runTool("edit", { path: "a.ts", old_string: "b = 2", new_string: "b = 3" }, ctx);
    expect(outcome.isError).toBeUndefined();
    expect(file("a.ts")).toBe("const a = 1;\nconst b = 3;\n");
  });

  it("refuses zero matches and leaves the file alone", async () => {
    const { ctx, file } = workspaceWith({ "a.ts": "const a = 1;\n" });
    const outcome = await runTool("edit", { path: "a.ts", old_string: "const z", new_string: "x" }, ctx);
    expect(outcome).toMatchObject({ isError: true, errorCode: "no-match" });
    expect(outcome.content).toContain("copy the text exactly");
    expect(file("a.ts")).toBe("const a = 1;\n");
  });

  it("refuses two matches naming the lines, unless replace_all", async () => {
    const { ctx, file } = workspaceWith({ "a.ts": "x = 1;\ny = 2;\nx = 1;\n" });
    const refused = await runTool("edit", { path: "a.ts", old_string: "x = 1;", new_string: "x = 9;" }, ctx);
    expect(refused).toMatchObject({ isError: true, errorCode: "ambiguous-match" });
    expect(refused.content).toContain("occurs 2 times");
    expect(refused.content).toContain("lines 1, 3");
    expect(file("a.ts")).toBe("x = 1;\ny = 2;\nx = 1;\n");
    const all = await runTool(
      "edit",
      { path: "a.ts", old_string: "x = 1;", new_string: "x = 9;", replace_all: true },
      ctx,
    );
    expect(all.data).toMatchObject({ replacements: 2 });
    expect(file("a.ts")).toBe("x = 9;\ny = 2;\nx = 9;\n");
  });

  it("keeps '$' sequences in new_string literal", async () => {
    const { ctx, file } = workspaceWith({ "a.txt": "price\n" });
    await runTool("edit", { path: "a.txt", old_string: "price", new_string: "$& $1 $$" }, ctx);
    expect(file("a.txt")).toBe("$& $1 $$\n");
  });
});

describe("apply_patch", () => {
  const files = { "a.txt": "alpha\nbeta\ngamma\n", "b.txt": "one\ntwo\nthree\n", "old.txt": "bye\n" };
  const goodPatch = [
    "--- a/a.txt",
    "+++ b/a.txt",
    "@@ -1,3 +1,3 @@",
    " alpha",
    "-beta",
    "+BETA",
    " gamma",
    "--- a/b.txt",
    "+++ b/b.txt",
    "@@ -1,3 +1,3 @@",
    " one",
    "-two",
    "+TWO",
    " three",
    "--- /dev/null",
    "+++ b/new/c.txt",
    "@@ -0,0 +1,1 @@",
    "+created",
    "--- a/old.txt",
    "+++ /dev/null",
    "@@ -1,1 +0,0 @@",
    "-bye",
    "",
  ].join("\n");

  it("applies several files at once: modify, create, delete", async () => {
    const { ctx, file } = workspaceWith(files);
    const outcome = await runTool("apply_patch", { patch: goodPatch }, ctx);
    expect(outcome.isError, outcome.content).toBeUndefined();
    expect(file("a.txt")).toBe("alpha\nBETA\ngamma\n");
    expect(file("b.txt")).toBe("one\nTWO\nthree\n");
    expect(file("new/c.txt")).toBe("created\n");
    expect(existsSync(join(ctx.workspace, "old.txt"))).toBe(false);
  });

  it("with one failing hunk leaves every file untouched", async () => {
    const { ctx, file } = workspaceWith(files);
    const bad = goodPatch.replace(" one\n-two", " one\n-TWO-NOT-THERE");
    const outcome = await runTool("apply_patch", { patch: bad }, ctx);
    expect(outcome).toMatchObject({ isError: true, errorCode: "patch-failed" });
    expect(outcome.content).toContain("b.txt: hunk @@ -1,3 +1,3 @@ does not match");
    expect(outcome.content).toContain("no file was changed");
    expect(file("a.txt")).toBe(files["a.txt"]);
    expect(file("b.txt")).toBe(files["b.txt"]);
    expect(file("old.txt")).toBe(files["old.txt"]);
    expect(existsSync(join(ctx.workspace, "new/c.txt"))).toBe(false);
  });

  it("refuses garbage and a patch touching a path outside the workspace, changing nothing", async () => {
    const { ctx, file } = workspaceWith(files);
    expect((await runTool("apply_patch", { patch: "not a diff" }, ctx)).errorCode).toMatch(/patch-invalid/);
    const escaping = `${goodPatch}--- /dev/null\n+++ b/../evil.txt\n@@ -0,0 +1,1 @@\n+evil\n`;
    const outcome = await runTool("apply_patch", { patch: escaping }, ctx);
    expect(outcome.errorCode).toBe("path-outside-workspace");
    expect(file("a.txt")).toBe(files["a.txt"]);
  });

  it("an I/O failure while writing puts back every file already written", async () => {
    const { ctx, file } = workspaceWith(files);
    // Both sections fit the current files, but 'x' is written as a file before 'x/y.txt' needs it as a directory.
    const clash = [
      "--- a/a.txt",
      "+++ b/a.txt",
      "@@ -1,3 +1,3 @@",
      " alpha",
      "-beta",
      "+BETA",
      " gamma",
      "--- /dev/null",
      "+++ b/x",
      "@@ -0,0 +1,1 @@",
      "+plain file",
      "--- /dev/null",
      "+++ b/x/y.txt",
      "@@ -0,0 +1,1 @@",
      "+nested",
      "",
    ].join("\n");
    const outcome = await runTool("apply_patch", { patch: clash }, ctx);
    expect(outcome).toMatchObject({ isError: true, errorCode: "patch-failed" });
    expect(outcome.content).toContain("every file was restored");
    expect(file("a.txt")).toBe(files["a.txt"]);
    expect(existsSync(join(ctx.workspace, "x"))).toBe(false);
  });
});

describe("grep", () => {
  const tree = {
    "src/a.ts": "import x\nconst needle = 1;\nexport {}\n",
    "src/b.js": "needle here\n",
    "docs/c.md": "# Needle\n",
    "node_modules/m/i.js": "needle\n",
  };

  it("refuses a regular expression that backtracks past its budget, off the event loop, and goes on working", async () => {
    const ctx = testToolContext({ limits: { grepRegexMs: 300 } });
    writeFileSync(join(ctx.workspace, "bomb.txt"), `${"a".repeat(40)}!\nfine line\n`);
    // The event loop keeps turning while the pattern runs (it runs in the regex worker).
    let turns = 0;
    const ticker = setInterval(() => turns++, 20);
    const slow = await runTool("grep", { pattern: "^(a+)+$" }, ctx);
    clearInterval(ticker);
    expect(slow).toMatchObject({ isError: true, errorCode: "regex-too-slow" });
    expect(slow.content).toBe(
      "The regular expression ran longer than 300 ms (reached in 'bomb.txt'): it backtracks too much, as nested quantifiers like (a+)+ do. Simplify it, or narrow the path or glob.",
    );
    expect(turns).toBeGreaterThan(5);
    // A new worker takes the next call.
    expect((await runTool("grep", { pattern: "fine", ignore_case: true }, ctx)).content).toBe("bomb.txt:2:fine line");
  });

  it("one agent's slow patterns, even several at once and from its sub-agents, do not hold another agent's grep", async () => {
    const slow = testToolContext({ agent: "mallory", limits: { grepRegexMs: 1_000 } });
    writeFileSync(join(slow.workspace, "bomb.txt"), `${"a".repeat(40)}!\n`);
    const family = ["mallory", "mallory--a1b2c3d4", "mallory--e5f6g7h8", "mallory"];
    const pending = new Set<number>();
    const slowCalls = family.map((agent, index) => {
      pending.add(index);
      return runTool("grep", { pattern: "^(a+)+$" }, { ...slow, agent }).finally(() => pending.delete(index));
    });
    const other = testToolContext({ agent: "ada" });
    writeFileSync(join(other.workspace, "notes.md"), "todo: ship it\n");

    expect((await runTool("grep", { pattern: "ship" }, other)).content).toBe("notes.md:1:todo: ship it");
    // Answered while every one of mallory's calls is still running or waiting for its turn.
    expect(pending.size).toBe(4);
    // One after the other: mallory and its sub-agents run on one worker at a time.
    for (const outcome of await Promise.all(slowCalls)) {
      expect(outcome).toMatchObject({ isError: true, errorCode: "regex-too-slow" });
    }
  }, 20_000);

  it("a grep canceled while its pattern runs ends at once, as canceled", async () => {
    const ctx = testToolContext({ limits: { grepRegexMs: 60_000 } });
    writeFileSync(join(ctx.workspace, "bomb.txt"), `${"a".repeat(40)}!\n`);
    const call = runTool("grep", { pattern: "^(a+)+$" }, ctx);
    setTimeout(() => ctx.abort.abort(new Error("canceled by operator")), 200);
    expect(await call).toMatchObject({ isError: true, errorCode: "canceled" });
    // The worker it ran on was replaced: the next call is answered.
    writeFileSync(join(ctx.workspace, "bomb.txt"), "fine\n");
    const next = testToolContext({ workspace: ctx.workspace });
    expect((await runTool("grep", { pattern: "fine" }, next)).content).toBe("bomb.txt:1:fine");
  });

  it("finds matches with path:line:text, honouring glob, ignore_case and context", async () => {
    const { ctx } = workspaceWith(tree);
    const plain = await runTool("grep", { pattern: "needle" }, ctx);
    expect(plain.content).toBe("src/a.ts:2:const needle = 1;\nsrc/b.js:1:needle here");
    const globbed = await runTool("grep", { pattern: "needle", glob: "**/*.ts" }, ctx);
    expect(globbed.content).toBe("src/a.ts:2:const needle = 1;");
    const folded = await runTool("grep", { pattern: "needle", ignore_case: true, path: "docs" }, ctx);
    expect(folded.content).toBe("docs/c.md:1:# Needle");
    const context = await runTool("grep", { pattern: "needle", context: 1, path: "src/a.ts" }, ctx);
    expect(context.content).toBe("src/a.ts-1-import x\nsrc/a.ts:2:const needle = 1;\nsrc/a.ts-3-export {}");
  });

  it("takes a JavaScript regex: anchors, alternation, classes", async () => {
    const { ctx } = workspaceWith({
      "cfg.ts": "const port = 8080;\nconst host = 'a';\n// const port = 1;\nconst portal = 2;\n",
    });
    const outcome = await runTool("grep", { pattern: "^const (port|host) = (\\d+|'\\w')" }, ctx);
    expect(outcome.content).toBe("cfg.ts:1:const port = 8080;\ncfg.ts:2:const host = 'a';");
    expect(outcome.data).toMatchObject({ matches: 2, truncated: false });
  });

  it("caps results and reports an invalid regex", async () => {
    const { ctx } = workspaceWith({ "many.txt": "hit\n".repeat(50) });
    const capped = await runTool("grep", { pattern: "hit", max_results: 5 }, ctx);
    expect(capped.data).toMatchObject({ matches: 5, truncated: true });
    expect(capped.content).toContain("stopped at 5 matches");
    const invalid = await runTool("grep", { pattern: "(" }, ctx);
    expect(invalid).toMatchObject({ isError: true, errorCode: "invalid-regex" });
    expect(invalid.content).toContain("Escape special characters");
  });
});

describe("glob and ls", () => {
  it("glob lists sorted relative paths, skipping node_modules", async () => {
    const { ctx } = workspaceWith({ "src/b.ts": "", "src/a.ts": "", "src/x.md": "", "node_modules/m.ts": "" });
    expect((await runTool("glob", { pattern: "**/*.ts" }, ctx)).content).toBe("src/a.ts\nsrc/b.ts");
    expect((await runTool("glob", { pattern: "*.ts", path: "src" }, ctx)).content).toBe("src/a.ts\nsrc/b.ts");
    expect((await runTool("glob", { pattern: "*.none" }, ctx)).content).toBe("No files match.");
    const missing = await runTool("glob", { pattern: "*.ts", path: "nope" }, ctx);
    expect(missing).toMatchObject({ isError: true, errorCode: "not-found" });
    expect(missing.content).toBe("'nope' is not a directory. Give a directory as path.");
  });

  it("never lists or reads outside the workspace: a '..' hidden in braces is refused, and no match outside is kept", async () => {
    // Two workspaces side by side, as every agent's are under MONIRO_WORKSPACES_DIR.
    const root = mkdtempSync(join(tmpdir(), "moniro-glob-escape-"));
    mkdirSync(join(root, "attacker"));
    mkdirSync(join(root, "victim"));
    writeFileSync(join(root, "victim", "secret.txt"), "TOPSECRET\n");
    const ctx = testToolContext({ workspace: join(root, "attacker") });
    for (const pattern of ["..{,}/victim/**", "..{,}/*/**", "{..,x}/**", "x/../../victim/*"]) {
      const grep = await runTool("grep", { pattern: ".", glob: pattern }, ctx);
      expect(grep).toMatchObject({ isError: true, errorCode: "invalid-glob" });
      expect(grep.content).toBe(`Glob '${pattern}' contains '..'; patterns may not leave the workspace.`);
      expect((await runTool("glob", { pattern }, ctx)).errorCode).toBe("invalid-glob");
    }
    // What a pattern expands to is checked too: had one still reached the parent, nothing of it is kept.
    expect(await globInside("..{,}/*/**", join(root, "attacker"), join(root, "attacker"))).toEqual([]);
    expect(await globInside("**", join(root, "attacker"), join(root, "attacker"))).toEqual([]);
    rmSync(root, { recursive: true, force: true });
  });

  it("lists nothing through a link out of the workspace named in the pattern, and still lists its own files", async () => {
    const root = mkdtempSync(join(tmpdir(), "moniro-glob-link-"));
    mkdirSync(join(root, "attacker", "src"), { recursive: true });
    mkdirSync(join(root, "victim", "deep"), { recursive: true });
    writeFileSync(join(root, "victim", "secret.txt"), "TOPSECRET\n");
    writeFileSync(join(root, "victim", "deep", "more.txt"), "TOPSECRET\n");
    writeFileSync(join(root, "attacker", "src", "own.ts"), "");
    // What `exec ln -s` leaves: one link to another agent's workspace, one to the host's root.
    symlinkSync(join(root, "victim"), join(root, "attacker", "escape"));
    symlinkSync("/", join(root, "attacker", "root"));
    const ctx = testToolContext({ workspace: join(root, "attacker") });
    for (const pattern of [
      "escape/*",
      "escape/**/*",
      "escape/deep/*",
      "root/etc/*",
      "root/*",
      "{escape,src}/*",
      "{root,src}/etc/*",
    ]) {
      const glob = await runTool("glob", { pattern }, ctx);
      // Only the workspace's own file may match (`{escape,src}/*` names it too).
      expect(glob.content, pattern).toBe(pattern.startsWith("{escape,src}") ? "src/own.ts" : "No files match.");
      const grep = await runTool("grep", { pattern: ".", glob: pattern }, ctx);
      expect(grep.content, pattern).not.toContain("TOPSECRET");
    }
    expect((await runTool("glob", { pattern: "**/*" }, ctx)).content).toBe("src/own.ts");
    expect((await runTool("glob", { pattern: "src/*" }, ctx)).content).toBe("src/own.ts");
    rmSync(root, { recursive: true, force: true });
  });

  it("ls shows directories and files with sizes", async () => {
    const { ctx } = workspaceWith({ "src/a.ts": "12345", "README.md": "hi" });
    const outcome = await runTool("ls", {}, ctx);
    expect(outcome.content).toBe("README.md\t2\nsrc/");
    const onFile = await runTool("ls", { path: "README.md" }, ctx);
    expect(onFile).toMatchObject({ isError: true, errorCode: "not-a-directory" });
    expect(onFile.content).toBe("'README.md' is a file; use 'read'.");
    expect((await runTool("ls", { path: "missing" }, ctx)).errorCode).toBe("not-found");
  });
});
