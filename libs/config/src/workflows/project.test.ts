import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { loadProject } from "./load-project.js";
import { ProjectConfigError, WorkflowDefinitionError } from "./workflow-definition-error.js";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "moniro-config-project-"));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

function write(file: string, lines: string[]): void {
  mkdirSync(dirname(join(dir, file)), { recursive: true });
  writeFileSync(join(dir, file), `${lines.join("\n")}\n`);
}

async function failure(): Promise<Error> {
  const error = await loadProject(dir).then(
    () => undefined,
    (caught: unknown) => caught,
  );
  if (!(error instanceof Error)) throw new Error("expected the project to be refused");
  return error;
}

describe("loadProject", () => {
  it("without moniro.yaml discovers .agents/*.yaml and .workflows/*.yaml", async () => {
    write(".agents/alice.yaml", ["name: alice", "model: m"]);
    write(".agents/bob.yaml", ["name: bob", "model: m"]);
    write(".workflows/review.yaml", ["agents: { alice: { ref: alice }, bob: { ref: bob }, helper: { model: h } }"]);
    const project = await loadProject(dir);
    expect(project.configFile).toBeUndefined();
    expect([...project.agents.keys()]).toEqual(["alice", "bob"]);
    expect([...project.workflows.keys()]).toEqual(["review"]);
  });

  it("is empty, not an error, when neither directory exists", async () => {
    const project = await loadProject(dir);
    expect(project.agents.size + project.workflows.size).toBe(0);
  });

  it("with moniro.yaml loads only what it registers: agent files, inline agents, workflows", async () => {
    write("moniro.yaml", [
      "agents:",
      "  - .agents/alice.yaml",
      "  - name: helper",
      "    model: claude-haiku-4-5",
      "    prompt: { system_file: prompts/helper.md }",
      "workflows:",
      "  review: .workflows/review.yaml",
    ]);
    write("prompts/helper.md", ["You help."]);
    write(".agents/alice.yaml", ["name: alice", "model: m"]);
    write(".agents/ignored.yaml", ["name: ignored", "model: m"]);
    write(".workflows/review.yaml", ["agents: { alice: { ref: alice }, helper: { ref: helper } }"]);
    write(".workflows/other.yaml", ["agents: { nobody: { ref: nobody } }"]);
    const project = await loadProject(dir);
    expect(project.configFile).toBe(join(dir, "moniro.yaml"));
    expect([...project.agents.keys()]).toEqual(["alice", "helper"]);
    expect(project.agents.get("helper")).toMatchObject({ systemPrompt: "You help.\n", file: join(dir, "moniro.yaml") });
    expect([...project.workflows.keys()]).toEqual(["review"]);
  });

  it("names an unknown ref with the file, the field, the closest agent and the fix", async () => {
    write(".agents/alice.yaml", ["name: alice", "model: m"]);
    write(".workflows/review.yaml", ["agents: { alise: { ref: alise } }"]);
    const error = await failure();
    expect(error).toBeInstanceOf(WorkflowDefinitionError);
    expect(error.message).toBe(
      ".workflows/review.yaml: agents.alise.ref: no agent 'alise' is defined; did you mean 'alice'?: create .agents/alise.yaml (or register it in moniro.yaml), or define the agent inline without 'ref'".replace(
        ".workflows/",
        `${join(dir, ".workflows")}/`,
      ),
    );
  });

  it("refuses an inline agent that takes a defined agent's name", async () => {
    write(".agents/alice.yaml", ["name: alice", "model: m"]);
    write(".workflows/review.yaml", ["agents: { alice: { model: m } }"]);
    expect((await failure()).message).toContain(
      "agents.alice: 'alice' is also an agent of .agents/: write 'alice: { ref: alice }' to use it, or give the inline agent another name",
    );
  });

  it("gathers the problems of every file into one error", async () => {
    write(".agents/alice.yaml", ["name: alice"]);
    write(".workflows/review.yaml", ["agents: { bob: { ref: bob, soul: x } }"]);
    write(".workflows/deploy.yaml", ["agents: { cy: { model: m, prompt: { system: a, system_file: b } } }"]);
    const error = await failure();
    expect(error).toBeInstanceOf(ProjectConfigError);
    expect(error.message).toMatch(/alice\.yaml: model: is required/);
    expect(error.message).toMatch(/review\.yaml: agents\.bob\.soul: a ref agent cannot define 'soul'/);
    expect(error.message).toMatch(/deploy\.yaml: agents\.cy\.prompt: set either 'system' or 'system_file', not both/);
  });

  it("names moniro.yaml's own mistakes: a missing file, a workflow registered under another name, bad keys", async () => {
    write("moniro.yaml", [
      "agents: [.agents/nope.yaml, { name: h, model: m, prompt: { append: x } }]",
      "workflows: { review: .workflows/rev.yaml, Bad: x.yaml }",
      "workspace: { base: .workspace/ }",
    ]);
    write(".workflows/rev.yaml", ["agents: { h: { ref: h } }"]);
    const first = await failure();
    expect(first.message).toContain("moniro.yaml: invalid project file (2 problems)");
    expect(first.message).toContain("workflows.Bad: must be 1-63 characters");
    expect(first.message).toContain("workspace: unknown key 'workspace'");
    write("moniro.yaml", [
      "agents: [.agents/nope.yaml, { name: h, model: m, prompt: { append: x } }]",
      "workflows: { review: .workflows/rev.yaml }",
    ]);
    const error = await failure();
    expect(error.message).toContain("moniro.yaml: agents.0: .agents/nope.yaml does not exist (paths are relative to");
    expect(error.message).toContain("moniro.yaml: agents.1.prompt.append: unknown key 'append'");
    expect(error.message).toContain(
      "moniro.yaml: workflows.review: .workflows/rev.yaml defines workflow 'rev' (its file name): register it as 'rev: .workflows/rev.yaml', or rename the file to review.yaml",
    );
  });
});
