import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { prepareDemoAgent } from "./demo-agent.js";

describe("prepareDemoAgent", () => {
  const dirs: string[] = [];
  const scratch = () => {
    const dir = mkdtempSync(join(tmpdir(), "moniro-demo-"));
    dirs.push(dir);
    return dir;
  };
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  it("defines alice on the mock backend without ANTHROPIC_API_KEY, and fills her workspace", () => {
    const dir = scratch();
    const prepared = prepareDemoAgent(join(dir, "agents"), join(dir, "ws"), {});
    expect(prepared).toMatchObject({ action: "defined", backend: "mock" });
    const yaml = parse(readFileSync(join(dir, "agents", "alice.yaml"), "utf8"));
    expect(yaml).toMatchObject({ name: "alice", backend: "mock", model: "mock" });
    expect(typeof yaml.prompt.system).toBe("string");
    expect(readFileSync(join(dir, "ws", "alice", "notes.md"), "utf8")).toContain("# Notes");
  });

  it("rewrites its own definition to follow ANTHROPIC_API_KEY", () => {
    const dir = scratch();
    prepareDemoAgent(join(dir, "agents"), join(dir, "ws"), {});
    const prepared = prepareDemoAgent(join(dir, "agents"), join(dir, "ws"), { ANTHROPIC_API_KEY: "k" });
    expect(prepared).toMatchObject({ action: "defined", backend: "anthropic" });
    expect(parse(readFileSync(prepared.yamlFile, "utf8")).backend).toBe("anthropic");
  });

  it("keeps the user's own alice.yaml and workspace files", () => {
    const dir = scratch();
    mkdirSync(join(dir, "agents"));
    writeFileSync(join(dir, "agents", "alice.yaml"), "name: alice\nmodel: m\nbackend: mock\n");
    mkdirSync(join(dir, "ws", "alice"), { recursive: true });
    writeFileSync(join(dir, "ws", "alice", "notes.md"), "mine");
    const prepared = prepareDemoAgent(join(dir, "agents"), join(dir, "ws"), { ANTHROPIC_API_KEY: "k" });
    expect(prepared).toMatchObject({ action: "kept", backend: "mock" });
    expect(readFileSync(join(dir, "agents", "alice.yaml"), "utf8")).toBe("name: alice\nmodel: m\nbackend: mock\n");
    expect(readFileSync(join(dir, "ws", "alice", "notes.md"), "utf8")).toBe("mine");
  });
});
