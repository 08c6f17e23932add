import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { printServiceLogsOnFailure, type Stack, startStack } from "../support/stack.js";

const AGENT = "name: alice\nmodel: mock\nbackend: mock\n";
const workflow = (steps: string) => `
agents:
  alice: { ref: alice }
  helper: { model: mock, backend: mock, prompt: { system: "You help." } }
setup:
${steps}
kickoff: "@alice the notes say: \${{ notes }}"
`;

/**
 * Setup steps of a workflow run on a tool-executor, sandboxed like `exec`,
 * in the instance's shared directory `<MONIRO_WORKSPACES_DIR>/<workflow>__<tag>`;
 * their `as:` outputs fill the kickoff; a failing step fails the start with its
 * output and leaves nothing behind.
 */
describe("workflow setup steps through a tool-executor", () => {
  let stack: Stack;
  printServiceLogsOnFailure(() => stack);

  beforeAll(async () => {
    stack = await startStack({
      services: ["gateway", "tool-executor"],
      agents: { alice: AGENT },
      workflows: {
        notes: workflow("  - shell: echo 'line 42 is wrong' > notes.txt\n  - shell: cat notes.txt\n    as: notes\n"),
        broken: workflow(
          "  - shell: echo first > a.txt\n  - shell: echo 'no such branch' >&2; exit 3\n    as: notes\n",
        ),
      },
    });
  }, 60_000);
  afterAll(async () => {
    await stack?.stop();
  });

  const api = (method: string, path: string, body?: unknown) =>
    fetch(`${stack.gatewayUrl}${path}`, {
      method,
      headers: { "content-type": "application/json" },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });

  it("runs the steps in the shared directory and feeds their output to the kickoff; stop removes the directory", async () => {
    const started = await api("POST", "/v1/workflows/notes/instances", { tag: "pr-1" });
    expect(started.status).toBe(201);
    expect(await started.json()).toMatchObject({ kickoff: { mentions: ["alice"] } });
    const dir = join(stack.workspacesDir, "notes__pr-1");
    expect(readFileSync(join(dir, "notes.txt"), "utf8")).toBe("line 42 is wrong\n");
    const channel = await api("GET", "/v1/workflows/notes/instances/pr-1");
    expect(channel.status).toBe(200);

    const stopped = (await (await api("DELETE", "/v1/workflows/notes/instances/pr-1")).json()) as {
      discarded: boolean;
    };
    expect(stopped.discarded).toBe(true);
    expect(existsSync(dir)).toBe(false);
  });

  it("a failing step fails the start with its output and leaves nothing: no state, no inline agent, no directory", async () => {
    const response = await api("POST", "/v1/workflows/broken/instances", {});
    expect(response.status).toBe(400);
    const body = (await response.json()) as { error: { code: string; message: string; details: { step: number } } };
    expect(body.error.code).toBe("setup_failed");
    expect(body.error.message).toContain("setup step 2 (echo 'no such branch' >&2; exit 3) failed: exit code 3");
    expect(body.error.message).toContain("no such branch");
    expect(body.error.details.step).toBe(1);
    expect((await api("GET", "/v1/workflows/broken/instances/main")).status).toBe(404);
    expect((await api("GET", "/v1/agents/broken__main__helper/definition")).status).toBe(404);
    expect(existsSync(join(stack.workspacesDir, "broken__main"))).toBe(false);
  });
});
