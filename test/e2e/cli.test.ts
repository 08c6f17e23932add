import { type ChildProcess, execFile, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { threadPageSchema } from "@moniro/api";
import { createSubjects, type OutboundEnvelopeInput, stamp } from "@moniro/envelopes";
import { RedisWorkspaceStore } from "@moniro/store";
import { testClient } from "@moniro/store/test";
import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { eventually } from "../support/eventually.js";
import { freePort } from "../support/ports.js";
import { NATS_URL, printServiceLogsOnFailure, type Stack, startStack } from "../support/stack.js";

const CLI = fileURLToPath(new URL("../../libs/cli/dist/moniro.js", import.meta.url));
const KEY = "cli-e2e-key";
const AGENT = "name: alice\nmodel: mock\nbackend: mock\n";
const UNREACHABLE_HINT = "is the gateway running? start it with `moniro up` or set MONIRO_GATEWAY_URL";

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Every command the CLI has today, as a user runs it (the built binary, as a
 * child process) against a running stack over real NATS and Redis: gateway
 * (with an API key), agent-runner, tool-executor; agent alice on the mock model.
 */
describe("moniro CLI against a running stack", () => {
  let stack: Stack;
  let gateway: string;
  let nc: NatsConnection;
  printServiceLogsOnFailure(() => stack);

  beforeAll(async () => {
    stack = await startStack({
      services: ["gateway", "agent-runner", "tool-executor"],
      agents: { alice: AGENT },
      workflows: { review: "agents:\n  bob: { ref: bob }\n" },
      env: { MONIRO_GATEWAY_OPEN: "false", MONIRO_API_KEYS: KEY },
    });
    gateway = stack.gatewayUrl;
    nc = await connect({ servers: NATS_URL });
  }, 60_000);
  afterAll(async () => {
    await nc?.close();
    await stack?.stop();
  });

  const env = (extra: Record<string, string> = {}) => ({
    PATH: process.env.PATH ?? "",
    MONIRO_GATEWAY_URL: gateway,
    MONIRO_API_KEY: KEY,
    NO_COLOR: "1",
    ...extra,
  });
  const moniro = async (args: string[], extra: Record<string, string> = {}): Promise<Run> => {
    try {
      const { stdout, stderr } = await promisify(execFile)(process.execPath, [CLI, ...args], { env: env(extra) });
      return { code: 0, stdout, stderr };
    } catch (error) {
      const e = error as { code: number; stdout: string; stderr: string };
      return { code: e.code, stdout: e.stdout, stderr: e.stderr };
    }
  };
  /** A long-running `moniro …` (events), its output collected. */
  const background = (args: string[]) => {
    const child: ChildProcess = spawn(process.execPath, [CLI, ...args], {
      env: env(),
      stdio: ["ignore", "pipe", "pipe"],
    });
    const out = { stdout: "", stderr: "" };
    child.stdout?.on("data", (chunk: Buffer) => (out.stdout += chunk.toString("utf8")));
    child.stderr?.on("data", (chunk: Buffer) => (out.stderr += chunk.toString("utf8")));
    const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
    return { child, out, exited };
  };
  /** The last sequence of the namespace's outbound stream (what `--last-event-id` resumes after). */
  const lastOutSequence = async () =>
    (await (await jetstreamManager(nc)).streams.info(createSubjects(stack.namespace).streams.out)).state.last_seq;
  const messagesIn = (ndjson: string) =>
    ndjson
      .split("\n")
      .filter((line) => line.startsWith("{"))
      .map((line) => JSON.parse(line) as { event: string; id?: string; data: { text?: string } })
      .filter((item) => item.event === "message");

  it("send, then events -o json shows alice's answer; thread shows the conversation", async () => {
    // Resume from the stream's current end: whenever the command gets connected, alice's answer is in what it prints.
    const events = background(["events", "alice", "-o", "json", "--last-event-id", String(await lastOutSequence())]);

    const sent = await moniro(["send", "alice", "hello from the cli", "-o", "json"]);
    expect(sent).toMatchObject({ code: 0, stderr: "" });
    const { id } = JSON.parse(sent.stdout) as { id: string };
    expect(id).toMatch(/.+/);

    const [answer] = await eventually(() => {
      const found = messagesIn(events.out.stdout);
      return found.length > 0 ? found : undefined;
    }, "alice's answer on `moniro events`");
    expect(answer?.id).toMatch(/^\d+$/);
    expect(answer?.data.text).toContain("hello from the cli");
    events.child.kill("SIGINT");
    expect(await events.exited).toBe(0);

    const text = await moniro(["send", "alice", "second"]);
    expect(text.stdout).toMatch(/^sent to alice: \S+\n$/);

    await eventually(
      async () => (await moniro(["status", "alice", "-o", "json"])).stdout.includes('"state": "idle"'),
      "alice idle",
    );
    const thread = await moniro(["thread", "alice", "--limit", "500"]);
    expect(thread.code).toBe(0);
    expect(thread.stdout).toMatch(/ ← http:cli \(immediate\): hello from the cli\n/);
    expect(thread.stdout).toMatch(/ ✉ reply: Hello! I'm alice\. You said: "hello from the cli"/);
    const page = parse((await moniro(["thread", "alice", "-o", "yaml", "--limit", "1"])).stdout) as {
      entries: Array<{ kind: string; text: string }>;
      next: string;
    };
    expect(page.entries).toHaveLength(1);
    expect(page.entries[0]).toMatchObject({ kind: "input", text: "hello from the cli" });
    // The real entries (input, assistant, tool-result) match the route's response schema of @moniro/api.
    const all = threadPageSchema.parse(JSON.parse((await moniro(["thread", "alice", "-o", "json"])).stdout));
    expect(new Set(all.entries.map((entry) => entry.kind))).toEqual(new Set(["input", "assistant", "tool-result"]));
    const more = await moniro(["thread", "alice", "--limit", "1"]);
    expect(more.stdout).toContain(`more: moniro thread alice --after ${page.next}\n`);
  }, 60_000);

  it("send on the target grammar: a channel post, alice in a workspace, and every refusal exactly as the API gives it", async () => {
    const notRunning = await moniro(["send", "alice@review", "task"]);
    expect(notRunning).toEqual({
      code: 1,
      stdout: "",
      stderr: 'Error: workflow "review" is not running.\nStart it with: moniro start review\n',
    });
    const tagged = await moniro(["send", "@review:pr-7", "hi all"]);
    expect(tagged.stderr).toBe(
      'Error: workflow "review:pr-7" is not running.\nStart it with: moniro start review --tag pr-7\n',
    );
    // A workflow not defined at all is not "start it": that would fail too.
    const undefinedWorkflow = await moniro(["send", "alice@nope", "task"]);
    expect(undefinedWorkflow.code).toBe(4);
    expect(undefinedWorkflow.stderr).toMatch(
      /answered 404 unknown_workflow: no workflow named 'nope' is defined; known workflows: review \(add \.workflows\/nope\.yaml\)\n$/,
    );

    const redis = testClient(stack.redis.url);
    try {
      const store = new RedisWorkspaceStore(redis, { prefix: stack.prefix });
      await store.instance("review", "main").start([{ name: "bob", agent: "bob", kind: "ref" }]);
      const notMember = await moniro(["send", "alice@review", "task"]);
      expect(notMember).toMatchObject({ code: 1, stdout: "" });
      expect(notMember.stderr).toMatch(
        /^Error: alice is not a participant in workflow "review"\.\nAdd alice to \.workflows\/review\.yaml first\.\n$/,
      );
      await store.instance("review", "main").stop();
      await store.instance("review", "main").start([{ name: "alice", agent: "alice", kind: "ref" }]);
      const inWorkspace = await moniro(["send", "alice@review", "task"]);
      expect(inWorkspace).toMatchObject({ code: 0, stderr: "" });
      expect(inWorkspace.stdout).toMatch(/^sent to alice@review:main: \S+\n$/);
      const posted = await moniro(["send", "@review", "note for everyone, @zed too"]);
      expect(posted).toMatchObject({ code: 0, stderr: "" });
      expect(posted.stdout).toMatch(/^posted to @review:main: \d+-\d+\nnot members \(nobody woken for them\): zed\n$/);
      const [entry] = (await store.instance("review", "main").channel.last(1)).entries;
      expect(entry).toMatchObject({ from: "http:cli", text: "note for everyone, @zed too" });
    } finally {
      redis.disconnect();
    }

    const bad = await moniro(["send", "alice@", "x"]);
    expect(bad).toEqual({
      code: 2,
      stdout: "",
      stderr:
        "moniro send: invalid target 'alice@': the workflow is missing: write 'alice' (a DM), '@review[:tag]' (the review workspace channel) or 'alice@review[:tag]'\n",
    });
  });

  it("status, agent info, pause, resume and cancel", async () => {
    const status = await moniro(["status", "alice"]);
    // No scheduler in this stack: the report says so; the agents still run (exit 0).
    expect(status.code).toBe(0);
    expect(status.stdout).toMatch(new RegExp(`^gateway ${gateway}: ready\\n\\nSERVICE +STATUS +DETAIL\\n`));
    expect(status.stdout).toMatch(
      /\nAGENT +STATE +RUNNER +INBOX \(immediate\/normal\/background\) +ERROR\nalice +idle +/,
    );
    expect(
      (parse((await moniro(["status", "-o", "yaml"])).stdout) as { services: { nats: { status: string } } }).services
        .nats.status,
    ).toBe("up");

    const info = await moniro(["agent", "info", "alice"]);
    expect(info.stdout).toMatch(/^alice: idle\n {2}runner: {3}-\n/);
    expect(info.stdout).toContain("  sub-agents: 0 live; 0 ended, using 0 input + 0 output tokens\n");
    expect(JSON.parse((await moniro(["agent", "info", "alice", "-o", "json"])).stdout)).toMatchObject({
      agent: "alice",
      state: "idle",
      children: [],
    });

    const paused = await moniro(["pause", "alice", "--reason", "maintenance"]);
    expect(paused).toMatchObject({ code: 0, stdout: "alice: pause done (state: paused)\n" });
    expect((await moniro(["status", "alice", "-o", "json"])).stdout).toContain('"state": "paused"');
    const resumed = await moniro(["resume", "alice", "-o", "json"]);
    expect(JSON.parse(resumed.stdout)).toMatchObject({ ok: true, agent: "alice", op: "resume" });
    // alice is idle: her runner refuses, and says why (exit 1).
    expect(await moniro(["cancel", "alice"])).toEqual({
      code: 1,
      stdout: "",
      stderr:
        "moniro cancel: the runner refused to cancel alice: agent 'alice' is not working on anything: nothing to cancel\n",
    });
  }, 60_000);

  it("events reconnects after the gateway restarts and prints what was sent meanwhile, once", async () => {
    const outbound = async (text: string) => {
      const envelope: OutboundEnvelopeInput = { ...stamp(), agent: "alice", to: "http:cli", text };
      await jetstream(nc).publish(createSubjects(stack.namespace).out("http"), JSON.stringify(envelope));
    };
    const events = background(["events", "alice", "-o", "json", "--last-event-id", String(await lastOutSequence())]);
    await outbound("before");
    await eventually(() => messagesIn(events.out.stdout).length === 1, "the first message");

    const old = stack.service("gateway");
    const port = old.port;
    await stack.kill(old);
    await outbound("while the gateway was down");
    await stack.start("gateway", { MONIRO_HTTP_PORT: String(port) }, { ownDefaultPort: port });
    await eventually(() => events.out.stderr.includes("moniro events: reconnected\n"), "the reconnect", 30_000);
    await outbound("after");
    await eventually(() => messagesIn(events.out.stdout).length >= 3, "three messages");
    events.child.kill("SIGINT");
    expect(await events.exited).toBe(0);

    expect(messagesIn(events.out.stdout).map((m) => m.data.text)).toEqual([
      "before",
      "while the gateway was down",
      "after",
    ]);
    const first = messagesIn(events.out.stdout)[0]?.id;
    expect(events.out.stderr).toMatch(
      new RegExp(`^moniro events: .+; reconnecting in \\d+\\.\\d s, resuming after event ${first}\\n`, "m"),
    );
    gateway = stack.gatewayUrl;
  }, 90_000);

  it("events prints a gap event as a line saying what was missed, why and where it resumes; -o json prints it as sent", async () => {
    const outbound = async (text: string) => {
      const envelope: OutboundEnvelopeInput = { ...stamp(), agent: "alice", to: "http:cli", text };
      return (await jetstream(nc).publish(createSubjects(stack.namespace).out("http"), JSON.stringify(envelope))).seq;
    };
    const end = await outbound("stored before");
    // Past the stream's end (kept from a stream recreated since): the gateway resumes from its end, with a gap event.
    const ahead = String(end + 1_000);
    const text = background(["events", "alice", "--last-event-id", ahead]);
    const json = background(["events", "alice", "-o", "json", "--last-event-id", ahead]);
    // Both connected (each prints only once it is; json's gap object is its first line).
    await eventually(() => text.out.stdout.includes("gap") || text.out.stdout.includes("! event"), "the gap line");
    await eventually(() => json.out.stdout.includes('"gap"'), "the gap object");
    const after = await outbound("after the gap");
    await eventually(() => text.out.stdout.includes("after the gap"), "the message after it");
    await eventually(() => messagesIn(json.out.stdout).length === 1, "the message after it (json)");
    for (const running of [text, json]) {
      running.child.kill("SIGINT");
      expect(await running.exited).toBe(0);
    }

    expect(text.out.stdout).toBe(
      [
        `  ! event ${ahead} is not one this stream sent (past its end: recreated since, or made up), so what it held before this connection is not shown; resuming after event ${end}`,
        "✉ message from alice to http:cli:",
        "after the gap",
        "",
      ].join("\n"),
    );
    const [gap, message] = json.out.stdout
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as { event: string; id?: string; data: Record<string, unknown> });
    expect(gap).toEqual({
      event: "gap",
      data: {
        error: { code: "unknown_event_id", message: expect.stringContaining(`Last-Event-ID ${ahead} is past`) },
        lastEventId: ahead,
        resumesAfter: String(end),
      },
    });
    expect(message).toMatchObject({ event: "message", id: String(after), data: { text: "after the gap" } });
  }, 60_000);

  it("errors: one line naming the URL and what to do, a documented exit code, never a stack trace", async () => {
    const unknown = await moniro(["thread", "zed"]);
    expect(unknown.code).toBe(4);
    expect(unknown.stderr).toBe(
      `moniro thread: GET ${gateway}/v1/agents/zed/thread answered 404 unknown_agent: no agent named 'zed': define it in MONIRO_AGENTS_DIR as zed.yaml (or PUT /v1/agents/zed/definition); known agents: alice\n`,
    );

    const wrongKey = await moniro(["status", "alice"], { MONIRO_API_KEY: "wrong" });
    expect(wrongKey.code).toBe(5);
    expect(wrongKey.stderr).toMatch(new RegExp(`^moniro status: GET ${gateway}/v1/status answered 401 unauthorized: `));
    expect(wrongKey.stderr).toMatch(
      /\nhint: set MONIRO_API_KEY to one of the gateway's keys \(its MONIRO_API_KEYS\)\n$/,
    );

    const port = await freePort();
    for (const args of [
      ["send", "alice", "hi"],
      ["events", "alice"],
      ["status"],
      ["agent", "info", "alice"],
      ["pause", "alice"],
    ]) {
      const command = args[0] === "agent" ? "agent info" : args[0];
      const down = await moniro([...args, "--gateway", `http://127.0.0.1:${port}`]);
      expect(down, args.join(" ")).toEqual({
        code: 3,
        stdout: "",
        stderr: `moniro ${command}: cannot reach the gateway at http://127.0.0.1:${port} (ECONNREFUSED): ${UNREACHABLE_HINT}\n`,
      });
    }

    // No signal-bridge runs in this stack: pairing is unavailable (503 → exit 6), said in one line.
    const pairing = await moniro(["pairing", "list"]);
    expect(pairing.code).toBe(6);
    expect(pairing.stderr).toMatch(
      new RegExp(
        `^moniro pairing list: GET ${gateway}/v1/pairing answered 503 signal_bridge_unavailable: no signal-bridge answered .*docs/signal.md\\)\n$`,
      ),
    );

    expect(await moniro(["--version"])).toEqual({ code: 0, stdout: "0.1.0\n", stderr: "" });
    const usage = await moniro(["thread"]);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toMatch(/^error: missing required argument 'agent'\n/);
    expect(`${unknown.stderr}${wrongKey.stderr}${usage.stderr}`).not.toMatch(/\n\s+at /);
  }, 60_000);
});
