import { type ChildProcess, execFile, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventually } from "../support/eventually.js";
import { printServiceLogsOnFailure, type Stack, startStack } from "../support/stack.js";

const CLI = fileURLToPath(new URL("../../libs/cli/dist/main.js", import.meta.url));
const KEY = "cli-workflows-key";
const AGENT = "name: alice\nmodel: mock\nbackend: mock\n";
const REVIEW = `
agents:
  alice: { ref: alice, role: reviewer }
  helper: { model: mock, backend: mock, prompt: { system: "You help." } }
variables:
  pr: "1"
kickoff: "@alice please review PR \${{ pr }}"
`;

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * `moniro run | start | stop | ps` as a user runs them (the built binary)
 * against a stack (gateway with a key, agent-runner) over real NATS and Redis;
 * alice and the inline helper on the mock model.
 */
describe("moniro workflow commands against a running stack", () => {
  let stack: Stack;
  printServiceLogsOnFailure(() => stack);

  beforeAll(async () => {
    stack = await startStack({
      services: ["gateway", "agent-runner"],
      agents: { alice: AGENT },
      workflows: { review: REVIEW },
      env: { MONIRO_GATEWAY_OPEN: "false", MONIRO_API_KEYS: KEY },
    });
  }, 60_000);
  afterAll(async () => {
    await stack?.stop();
  });

  const env = () => ({
    PATH: process.env.PATH ?? "",
    MONIRO_GATEWAY_URL: stack.gatewayUrl,
    MONIRO_API_KEY: KEY,
    NO_COLOR: "1",
  });
  const moniro = async (args: string[]): Promise<Run> => {
    try {
      const { stdout, stderr } = await promisify(execFile)(process.execPath, [CLI, ...args], { env: env() });
      return { code: 0, stdout, stderr };
    } catch (error) {
      const e = error as { code: number; stdout: string; stderr: string };
      return { code: e.code, stdout: e.stdout, stderr: e.stderr };
    }
  };
  const api = (method: string, path: string, body?: unknown) =>
    fetch(`${stack.gatewayUrl}${path}`, {
      method,
      headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });

  it("start, ps, stop: idempotent, and errors name what is wrong", async () => {
    const started = await moniro(["start", "review", "--tag", "pr-1", "--var", "pr=1"]);
    expect(started).toMatchObject({ code: 0, stderr: "" });
    expect(started.stdout).toContain(
      "review:pr-1: started\n  @alice  ref, reviewer\n  @helper (review__pr-1__helper)  inline",
    );
    expect((await moniro(["start", "review", "--tag", "pr-1"])).stdout).toMatch(/^review:pr-1: already running/);

    const ps = JSON.parse((await moniro(["ps", "-o", "json"])).stdout) as { instances: Array<{ instance: string }> };
    expect(ps.instances.map((instance) => instance.instance)).toEqual(["review:pr-1"]);
    expect((await moniro(["ps"])).stdout).toMatch(
      /^INSTANCE\s+STATUS\s+MEMBERS\s+STARTED\nreview:pr-1\s+running\s+alice,helper /,
    );

    expect((await moniro(["stop", "review", "--tag", "pr-1"])).stdout).toBe(
      "review:pr-1: stopped (workspace discarded)\n",
    );
    expect((await moniro(["stop", "review", "--tag", "pr-1"])).stdout).toBe("review:pr-1: not running\n");
    expect((await api("GET", "/v1/agents/review__pr-1__helper/definition")).status).toBe(404);

    const unknown = await moniro(["start", "nope"]);
    expect(unknown.code).not.toBe(0);
    expect(unknown.stderr).toContain("no workflow named 'nope' is defined; known workflows: review");
    const badVariable = await moniro(["start", "review", "--var", "typo=1"]);
    expect(badVariable.code).not.toBe(0);
    expect(badVariable.stderr).toContain("unknown variable 'typo'");
  });

  it("run prints the channel as it grows and Ctrl-C stops the instance; a runner restart keeps instance and channel", async () => {
    const child: ChildProcess = spawn(process.execPath, [CLI, "run", "review", "--tag", "live"], {
      env: env(),
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    child.stdout?.on("data", (chunk: Buffer) => (stdout += chunk.toString("utf8")));
    const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
    await eventually(
      () => stdout.includes("workflow:review: @alice please review PR 1"),
      "the kickoff on `moniro run`",
    );
    expect(stdout).toMatch(/^review:live: started \(Ctrl-C stops it\)\n/);

    // A runner restart mid-workflow: the instance and its channel live in Redis, not in a runner.
    await stack.kill(stack.service("agent-runner"));
    await stack.start("agent-runner");
    const instance = (await (await api("GET", "/v1/workflows/review/instances/live")).json()) as { status: string };
    expect(instance.status).toBe("running");

    const posted = await api("POST", "/v1/workflows/review/instances/live/channel", {
      from: "jane",
      text: "@alice look at line 42",
    });
    expect(posted.status).toBe(201);
    await eventually(() => stdout.includes("http:jane: @alice look at line 42"), "jane's post on `moniro run`");
    // The new runner took the @mention as alice's input (the mock model echoes it).
    await eventually(async () => {
      const thread = await moniro(["thread", "alice", "--limit", "500"]);
      return thread.stdout.includes("http:jane: @alice look at line 42");
    }, "jane's @mention in alice's thread");

    child.kill("SIGINT");
    expect(await exited).toBe(0);
    expect(stdout).toContain("review:live: stopped (workspace discarded)\n");
    expect((await api("GET", "/v1/workflows/review/instances/live")).status).toBe(404);
  });
});
