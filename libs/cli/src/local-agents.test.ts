import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createsLocally, projectFileOf } from "./local-agents.js";

const root = mkdtempSync(join(tmpdir(), "moniro-local-agents-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe("agent create with a moniro.yaml in the project", () => {
  it("finds moniro.yaml (or .yml) in MONIRO_PROJECT_DIR and then creates through the API unless --local is given", () => {
    const agentsDir = join(root, ".agents");
    mkdirSync(agentsDir);
    expect(projectFileOf({ MONIRO_PROJECT_DIR: root })).toBeUndefined();
    expect(createsLocally(undefined, "http://127.0.0.1:8080", agentsDir, undefined)).toBe(true);

    writeFileSync(join(root, "moniro.yml"), "agents: []\n");
    const projectFile = projectFileOf({ MONIRO_PROJECT_DIR: root });
    expect(projectFile).toBe(join(root, "moniro.yml"));
    expect(createsLocally(undefined, "http://127.0.0.1:8080", agentsDir, projectFile)).toBe(false);
    expect(createsLocally(true, "http://127.0.0.1:8080", agentsDir, projectFile)).toBe(true);
  });
});
