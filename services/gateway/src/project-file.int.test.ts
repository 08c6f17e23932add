import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { startTestGateway, type TestGateway } from "./test/gateway-fixture.js";

// Issue 14 "Workflow files": a moniro.yaml registers the agents and workflows the gateway serves
// (docs/workflows.md "The project file", docs/registry.md "Sources").

const PROJECT = (agents: string) => `
agents:
${agents}
workflows:
  duo: flows/duo.yaml
`;
const CAROL = "  - team/carol.yaml";
const DAVE = "  - { name: dave, model: m, prompt: { system: You help. } }";
const DUO = `
agents:
  carol: { ref: carol }
  dave: { ref: dave }
kickoff: "@carol and @dave, start."
`;

type Listed = { workflows: Array<{ name: string }>; problems: Array<{ file: string; message: string }> };

describe("moniro.yaml in MONIRO_PROJECT_DIR", () => {
  const made: TestGateway[] = [];
  const dirs: string[] = [];
  afterEach(async () => {
    for (const g of made.splice(0)) await g.cleanup();
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  const project = () => {
    const dir = mkdtempSync(join(tmpdir(), "moniro-project-"));
    dirs.push(dir);
    mkdirSync(join(dir, "team"));
    mkdirSync(join(dir, "flows"));
    writeFileSync(join(dir, "team", "carol.yaml"), "name: carol\nmodel: m\n");
    writeFileSync(join(dir, "flows", "duo.yaml"), DUO);
    writeFileSync(join(dir, "moniro.yaml"), PROJECT(`${CAROL}\n${DAVE}`));
    return dir;
  };
  const agentNames = async (g: TestGateway) => {
    const { agents } = (await (await g.fetch("/v1/agents")).json()) as { agents: Array<{ name: string }> };
    return agents.map((agent) => agent.name).sort();
  };
  const until = async <T>(read: () => Promise<T>, ok: (value: T) => boolean): Promise<T> => {
    const deadline = Date.now() + 15_000;
    for (;;) {
      const value = await read();
      if (ok(value) || Date.now() > deadline) return value;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };

  it("serves the agents and workflows moniro.yaml registers, follows its edits and keeps the last good state when it breaks", async () => {
    const dir = project();
    const g = await startTestGateway({ MONIRO_PROJECT_DIR: dir });
    made.push(g);
    await g.gateway.connected;

    // The fixture's agents directory (alice, bob) is not used: moniro.yaml decides.
    expect(await agentNames(g)).toEqual(["carol", "dave"]);
    const definition = (await (await g.fetch("/v1/agents/carol/definition")).json()) as { source: string };
    expect(definition).toMatchObject({ source: "file" });
    const deleted = await g.fetch("/v1/agents/dave", { method: "DELETE" });
    expect(deleted.status).toBe(409);
    expect(await deleted.json()).toMatchObject({
      error: {
        code: "file_agent",
        message: expect.stringMatching(/moniro\.yaml.*remove it from that file's 'agents:' list/),
      },
    });
    const listed = (await (await g.fetch("/v1/workflows")).json()) as Listed;
    expect(listed).toMatchObject({ workflows: [expect.objectContaining({ name: "duo" })], problems: [] });

    const started = await g.fetch("/v1/workflows/duo/instances", {
      method: "POST",
      body: JSON.stringify({ tag: "main" }),
      headers: { "content-type": "application/json" },
    });
    expect(started.status).toBe(201);
    expect(await started.json()).toMatchObject({
      instance: { instance: "duo:main", status: "running" },
      kickoff: { mentions: ["carol", "dave"], unreached: [] },
    });

    // A broken moniro.yaml: nothing changes (agents and workflows stay), and GET /v1/workflows says
    // which file and field, and the fix.
    writeFileSync(join(dir, "moniro.yaml"), `agents:\n${CAROL}\nworkflowz:\n  duo: flows/duo.yaml\n`);
    const broken = await until(
      async () => (await (await g.fetch("/v1/workflows")).json()) as Listed,
      (body) => body.problems.length > 0,
    );
    expect(broken.workflows.map((workflow) => workflow.name)).toEqual(["duo"]);
    expect(broken.problems).toEqual([
      { file: join(dir, "moniro.yaml"), message: expect.stringMatching(/moniro\.yaml: .*workflowz.*workflows/s) },
    ]);
    const unknown = await g.fetch("/v1/workflows/trio/instances", {
      method: "POST",
      body: JSON.stringify({}),
      headers: { "content-type": "application/json" },
    });
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toMatchObject({
      error: {
        code: "unknown_workflow",
        message: expect.stringMatching(/register it under 'workflows:' in .*moniro\.yaml; that file does not load now/),
      },
    });
    // The watch/periodic pass has seen the broken file too: dave, no longer listed in it, is kept.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await agentNames(g)).toEqual(["carol", "dave"]);

    // dave no longer registered: his file record goes (the workflow that refs him goes too, so it stays valid).
    writeFileSync(join(dir, "moniro.yaml"), `agents:\n${CAROL}\n`);
    expect(
      await until(
        () => agentNames(g),
        (names) => !names.includes("dave"),
      ),
    ).toEqual(["carol"]);
    const without = (await (await g.fetch("/v1/workflows")).json()) as Listed;
    expect(without).toEqual({ workflows: [], problems: [] });
  });

  it("without moniro.yaml the agents directory is synced as before", async () => {
    const dir = mkdtempSync(join(tmpdir(), "moniro-project-"));
    dirs.push(dir);
    const g = await startTestGateway({ MONIRO_PROJECT_DIR: dir });
    made.push(g);
    await g.gateway.connected;
    expect(await agentNames(g)).toEqual(["alice", "bob"]);
  });
});
