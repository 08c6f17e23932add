import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { PathOutsideWorkspaceError } from "../errors.js";
import { runTool } from "../run-tool.js";
import { tempDir, tempWorkspace, testToolContext } from "../test/test-context.js";
import { resolveInWorkspace } from "./workspace-path.js";

function setup() {
  const workspace = tempWorkspace();
  const outside = tempDir("moniro-outside-");
  writeFileSync(join(outside, "secret.txt"), "top secret\n");
  mkdirSync(join(workspace, "src"));
  writeFileSync(join(workspace, "src", "a.txt"), "hello\n");
  symlinkSync(outside, join(workspace, "escape"));
  symlinkSync(join(outside, "secret.txt"), join(workspace, "secret-link.txt"));
  symlinkSync(join(workspace, "src"), join(workspace, "src-link"));
  return { workspace, outside };
}

describe("resolveInWorkspace", () => {
  it("resolves relative, nested-new and absolute-inside paths", async () => {
    const { workspace } = setup();
    expect((await resolveInWorkspace(workspace, "src/a.txt")).display).toBe("src/a.txt");
    expect((await resolveInWorkspace(workspace, "new/dir/file.txt")).display).toBe("new/dir/file.txt");
    expect((await resolveInWorkspace(workspace, join(workspace, "src/a.txt"))).display).toBe("src/a.txt");
    expect((await resolveInWorkspace(workspace, "src/../src/a.txt")).display).toBe("src/a.txt");
    expect((await resolveInWorkspace(workspace, "src-link/a.txt")).display).toBe("src/a.txt");
    expect((await resolveInWorkspace(workspace, ".")).display).toBe(".");
  });

  it("refuses '..' traversal, absolute paths outside and symlinks leading outside", async () => {
    const { workspace, outside } = setup();
    for (const path of [
      "../x",
      "src/../../x",
      "/etc/passwd",
      join(outside, "secret.txt"),
      "escape/secret.txt",
      "escape/not-yet/new.txt",
      "secret-link.txt",
      "escape",
    ]) {
      await expect(resolveInWorkspace(workspace, path), path).rejects.toBeInstanceOf(PathOutsideWorkspaceError);
    }
  });

  it("refuses a dangling symlink (its target could be created outside)", async () => {
    const { workspace, outside } = setup();
    symlinkSync(join(outside, "later.txt"), join(workspace, "dangling.txt"));
    await expect(resolveInWorkspace(workspace, "dangling.txt")).rejects.toBeInstanceOf(PathOutsideWorkspaceError);
  });
});

describe("tools refuse paths outside the workspace", () => {
  it("read / write / edit / ls return an error result and touch nothing outside", async () => {
    const { workspace, outside } = setup();
    const ctx = testToolContext({ workspace });
    const calls: [string, Record<string, unknown>][] = [
      ["read", { path: "../../etc/passwd" }],
      ["read", { path: "/etc/passwd" }],
      ["read", { path: "escape/secret.txt" }],
      ["write", { path: "escape/secret.txt", content: "pwned" }],
      ["write", { path: "../pwned.txt", content: "pwned" }],
      ["edit", { path: "secret-link.txt", old_string: "top", new_string: "pwned" }],
      ["ls", { path: "escape" }],
      ["grep", { pattern: "secret", path: "escape" }],
      ["glob", { pattern: "*", path: "/etc" }],
    ];
    for (const [tool, input] of calls) {
      const outcome = await runTool(tool, input, ctx);
      expect(outcome.isError, `${tool} ${JSON.stringify(input)}`).toBe(true);
      expect(outcome.errorCode).toBe("path-outside-workspace");
      expect(outcome.content).toContain("outside the workspace");
    }
    expect(readFileSync(join(outside, "secret.txt"), "utf8")).toBe("top secret\n");
  });

  it("glob and grep patterns may not climb out with '..'", async () => {
    const { workspace } = setup();
    const ctx = testToolContext({ workspace });
    expect((await runTool("glob", { pattern: "../*" }, ctx)).errorCode).toBe("invalid-glob");
    expect((await runTool("grep", { pattern: "x", glob: "../**" }, ctx)).errorCode).toBe("invalid-glob");
  });

  it("grep and glob do not follow symlinks out of the workspace", async () => {
    const { workspace } = setup();
    const ctx = testToolContext({ workspace });
    const grep = await runTool("grep", { pattern: "secret" }, ctx);
    expect(grep.content).toBe("No matches.");
    const glob = await runTool("glob", { pattern: "**/*.txt" }, ctx);
    expect(glob.content).not.toContain("escape/secret.txt");
  });
});
