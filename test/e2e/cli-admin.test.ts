import { execFile } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { dlqRecord } from "@moniro/bus";
import { inboundEnvelopeSchema, stamp } from "@moniro/envelopes";
import { jetstream } from "@nats-io/jetstream";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { eventually } from "../support/eventually.js";
import { freePort } from "../support/ports.js";
import { NATS_URL, printServiceLogsOnFailure, type Stack, startStack } from "../support/stack.js";

const CLI = fileURLToPath(new URL("../../libs/cli/dist/moniro.js", import.meta.url));
const KEY = "cli-admin-e2e-key";
const UNREACHABLE_HINT = "is the gateway running? start it with `moniro up` or set MONIRO_GATEWAY_URL";

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * The agent, context, apply, status, schedule and DLQ commands as a user runs
 * them (the built binary, a child process) against a running stack over real
 * NATS and Redis: gateway with an API key, agent-runner, tool-executor,
 * scheduler; agents on the mock model.
 */
describe("moniro CLI: agents, context, apply, status, schedules, DLQ", () => {
  let stack: Stack;
  let gateway: string;
  let nc: NatsConnection;
  let work: string;
  printServiceLogsOnFailure(() => stack);

  beforeAll(async () => {
    stack = await startStack({
      services: ["gateway", "agent-runner", "tool-executor", "scheduler"],
      agents: { alice: "name: alice\nmodel: mock\nbackend: mock\n" },
      env: { MONIRO_GATEWAY_OPEN: "false", MONIRO_API_KEYS: KEY },
    });
    gateway = stack.gatewayUrl;
    nc = await connect({ servers: NATS_URL });
    work = mkdtempSync(join(tmpdir(), "moniro-cli-admin-"));
    chmodSync(work, 0o755);
  }, 60_000);
  afterAll(async () => {
    await nc?.close();
    await stack?.stop();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  const moniro = async (args: string[], extra: Record<string, string> = {}): Promise<Run> => {
    const env = {
      PATH: process.env.PATH ?? "",
      MONIRO_GATEWAY_URL: gateway,
      MONIRO_API_KEY: KEY,
      // No agents directory here: `agent create` goes through the API unless a test says otherwise.
      MONIRO_AGENTS_DIR: join(work, "no-such-dir"),
      NO_COLOR: "1",
      ...extra,
    };
    try {
      const { stdout, stderr } = await promisify(execFile)(process.execPath, [CLI, ...args], { env, cwd: work });
      return { code: 0, stdout, stderr };
    } catch (error) {
      const e = error as { code: number; stdout: string; stderr: string };
      return { code: e.code, stdout: e.stdout, stderr: e.stderr };
    }
  };
  const noStack = (run: Run) => expect(run.stderr).not.toMatch(/\n\s+at /);

  it("agent create (through the API and as a local file), list, info, edit, delete", async () => {
    const created = await moniro([
      "agent",
      "create",
      "bob",
      "--model",
      "mock",
      "--backend",
      "mock",
      "--system",
      "You review code.",
      "--role",
      "code-reviewer",
      "--expertise",
      "typescript,architecture",
    ]);
    expect(created).toMatchObject({ code: 0, stderr: "" });
    expect(created.stdout).toMatch(/^agent bob created \(source: api, revision \d+\)\n$/);
    const definition = JSON.parse(
      (await moniro(["agent", "create", "carol", "--from", "bob", "--style", "terse", "-o", "json"])).stdout,
    ) as { source: string; definition: Record<string, unknown> };
    expect(definition).toMatchObject({
      source: "api",
      definition: {
        name: "carol",
        model: "mock",
        prompt: { system: "You review code." },
        soul: { role: "code-reviewer", expertise: ["typescript", "architecture"], style: "terse" },
      },
    });
    const taken = await moniro(["agent", "create", "bob", "--model", "mock"]);
    expect(taken.code).toBe(1);
    expect(taken.stderr).toMatch(
      new RegExp(
        `^moniro agent create: POST ${gateway}/v1/agents answered 409 agent_exists: agent 'bob' already exists`,
      ),
    );
    const noModel = await moniro(["agent", "create", "dave"]);
    expect(noModel.code).toBe(2);
    expect(noModel.stderr).toMatch(/^moniro agent create: the flags: model: /);

    // Local: the agents directory exists and the gateway is on this machine → .agents/<name>.yaml, synced by the gateway.
    const local = await moniro(["agent", "create", "erin", "-m", "mock", "--backend", "mock", "--role", "helper"], {
      MONIRO_AGENTS_DIR: stack.agentsDir,
    });
    expect(local).toMatchObject({ code: 0, stderr: "" });
    expect(local.stdout).toMatch(/^agent erin created \(source: file, .*erin\.yaml, revision \d+\)\n$/);
    expect(parse(readFileSync(join(stack.agentsDir, "erin.yaml"), "utf8"))).toEqual({
      name: "erin",
      model: "mock",
      backend: "mock",
      soul: { role: "helper" },
    });

    const list = await moniro(["agent", "list"]);
    expect(list.code).toBe(0);
    expect(list.stdout).toMatch(/^NAME +SOURCE +REVISION +MODEL +STATE\n/);
    expect(list.stdout).toMatch(/\nalice +file +\d+ +mock +-\n/);
    expect(list.stdout).toMatch(/\nbob +api +\d+ +mock +-\n/);
    const listed = JSON.parse((await moniro(["agent", "list", "-o", "json"])).stdout) as {
      agents: Array<{ name: string }>;
    };
    expect(listed.agents.map((a) => a.name)).toEqual(["alice", "bob", "carol", "erin"]);

    await moniro(["agent", "memory", "bob", "set", "lang", "TypeScript"]);
    await moniro(["agent", "todo", "bob", "add", "review PR 7"]);
    const info = await moniro(["agent", "info", "bob"]);
    expect(info.code).toBe(0);
    expect(info.stdout).toMatch(/^bob: idle\n/);
    expect(info.stdout).toMatch(/\n {2}definition: revision \d+, source api, model mock\n/);
    expect(info.stdout).toContain("\n  context:  1 memory, 0 notes, 1 open todo (0 done)\n");
    expect(JSON.parse((await moniro(["agent", "info", "bob", "-o", "json"])).stdout)).toMatchObject({
      agent: "bob",
      definition: { source: "api" },
      context: { memories: 1, notes: 0, openTodos: 1, doneTodos: 0 },
    });

    // edit: $EDITOR changes the YAML; it is applied at the revision read.
    const editor = join(work, "edit.sh");
    writeFileSync(editor, '#!/bin/sh\nsed -i "s/You review code./You review code carefully./" "$1"\n');
    chmodSync(editor, 0o755);
    const edited = await moniro(["agent", "edit", "bob"], { EDITOR: editor });
    expect(edited).toMatchObject({ code: 0, stderr: "" });
    expect(edited.stdout).toMatch(/^agent bob configured \(revision \d+ → \d+\)\n$/);
    const after = JSON.parse((await moniro(["agent", "info", "bob", "-o", "json"])).stdout) as unknown;
    expect(after).toMatchObject({ agent: "bob" });
    expect(
      (
        JSON.parse((await moniro(["agent", "create", "x", "--from", "bob", "--no-local", "-o", "json"])).stdout) as {
          definition: { prompt: { system: string } };
        }
      ).definition.prompt.system,
    ).toBe("You review code carefully.");
    expect((await moniro(["agent", "edit", "bob"], { EDITOR: "true" })).stdout).toMatch(
      /^agent bob unchanged \(revision \d+\)\n$/,
    );
    // A change made meanwhile (here: by the "editor" itself) is a conflict, not overwritten.
    const racer = join(work, "race.sh");
    writeFileSync(
      racer,
      "#!/bin/sh\n" +
        `"${process.execPath}" "${CLI}" apply -f "${join(work, "race.yaml")}" >/dev/null\n` +
        'sed -i "s/carefully/quickly/" "$1"\n',
    );
    chmodSync(racer, 0o755);
    writeFileSync(join(work, "race.yaml"), "name: bob\nmodel: mock\nbackend: mock\ndescription: changed meanwhile\n");
    const conflict = await moniro(["agent", "edit", "bob"], { EDITOR: racer });
    expect(conflict.code).toBe(1);
    expect(conflict.stderr).toMatch(
      /^moniro agent edit: agent 'bob' was changed by someone else while you edited it \(you started from revision \d+, it is now at \d+\): nothing applied; your version is in .+; run `moniro agent edit bob` again\n$/,
    );
    // The edit is kept where the message says, and it is the user's version.
    const kept = /your version is in (.+); run/.exec(conflict.stderr)?.[1] ?? "";
    expect(readFileSync(kept, "utf8")).toContain("quickly");
    rmSync(kept);

    const fileAgent = await moniro(["agent", "delete", "alice", "--yes"]);
    expect(fileAgent.code).toBe(1);
    expect(fileAgent.stderr).toMatch(
      /^moniro agent delete: agent 'alice' is defined by the file .*alice\.yaml of the gateway's agents directory: delete that file \(the gateway then removes the agent\)\n$/,
    );
    const unconfirmed = await moniro(["agent", "delete", "carol"]);
    expect(unconfirmed).toEqual({
      code: 2,
      stdout: "",
      stderr: "moniro agent delete: not deleting agent 'carol' without confirmation: add --yes\n",
    });
    const deleted = await moniro(["agent", "delete", "carol", "--yes"]);
    expect(deleted).toMatchObject({ code: 0, stderr: "" });
    expect(deleted.stdout).toMatch(
      /^agent carol deleted \(was revision \d+\); its memory, notes, todos and thread are kept\n$/,
    );
    const gone = await moniro(["agent", "info", "carol"]);
    expect(gone.code).toBe(4);
    for (const run of [created, taken, noModel, local, edited, conflict, fileAgent, gone]) noStack(run);
  }, 90_000);

  it("agent memory, notes and todo", async () => {
    expect(await moniro(["agent", "memory", "alice"])).toEqual({
      code: 0,
      stdout: "alice has no memories\n",
      stderr: "",
    });
    expect((await moniro(["agent", "memory", "alice", "set", "editor", "helix"])).stdout).toBe(
      "alice: memory editor created\n",
    );
    expect((await moniro(["agent", "memory", "alice", "set", "editor", "vim", "mostly"])).stdout).toBe(
      "alice: memory editor updated\n",
    );
    expect((await moniro(["agent", "memory", "alice", "get", "editor"])).stdout).toBe("vim mostly\n");
    expect((await moniro(["agent", "memory", "alice"])).stdout).toBe("editor: vim mostly\n");
    expect(JSON.parse((await moniro(["agent", "memory", "alice", "-o", "json"])).stdout)).toEqual({
      entries: [{ key: "editor", value: "vim mostly" }],
    });
    expect((await moniro(["agent", "memory", "alice", "rm", "editor"])).stdout).toBe("alice: memory editor deleted\n");
    const missing = await moniro(["agent", "memory", "alice", "get", "editor"]);
    expect(missing.code).toBe(4);
    expect(missing.stderr).toMatch(
      new RegExp(`^moniro agent memory: GET ${gateway}/v1/agents/alice/memory/editor answered 404 not_found: `),
    );
    const badAction = await moniro(["agent", "memory", "alice", "put", "k", "v"]);
    expect(badAction).toEqual({
      code: 2,
      stdout: "",
      stderr:
        "moniro agent memory: unknown action 'put': use moniro agent memory <agent> get <key> | moniro agent memory <agent> set <key> <value> | moniro agent memory <agent> rm <key>\n",
    });

    expect((await moniro(["agent", "notes", "alice"])).stdout).toBe("alice has no notes\n");
    expect((await moniro(["agent", "notes", "alice", "add", "Learned", "X"])).stdout).toMatch(
      /^alice: note \S+ added\n$/,
    );
    expect((await moniro(["agent", "notes", "alice"])).stdout).toMatch(/^\d{4}-\d\d-\d\dT\S+ {2}Learned X\n$/);
    expect(
      (parse((await moniro(["agent", "notes", "alice", "-o", "yaml"])).stdout) as { notes: Array<{ text: string }> })
        .notes[0]?.text,
    ).toBe("Learned X");

    expect((await moniro(["agent", "todo", "alice"])).stdout).toBe("alice has no open todos\n");
    const added = await moniro(["agent", "todo", "alice", "add", "Review PR"]);
    const id = /todo (\S+) added/.exec(added.stdout)?.[1] ?? "";
    expect(added.stdout).toBe(`alice: todo ${id} added: Review PR\n`);
    expect((await moniro(["agent", "todo", "alice"])).stdout).toBe(`[ ] ${id}  Review PR\n`);
    expect((await moniro(["agent", "todo", "alice", "done", id])).stdout).toBe(`alice: todo ${id} done: Review PR\n`);
    expect((await moniro(["agent", "todo", "alice"])).stdout).toBe("alice has no open todos\n");
    expect((await moniro(["agent", "todo", "alice", "--all"])).stdout).toBe(`[x] ${id}  Review PR\n`);
    const noTodo = await moniro(["agent", "todo", "alice", "done", "999"]);
    expect(noTodo.code).toBe(4);
    expect(noTodo.stderr).toMatch(
      new RegExp(`^moniro agent todo: POST ${gateway}/v1/agents/alice/todos/999/done answered 404 not_found: `),
    );
    const noAgent = await moniro(["agent", "notes", "zed"]);
    expect(noAgent.code).toBe(4);
    expect(noAgent.stderr).toMatch(
      new RegExp(`^moniro agent notes: GET ${gateway}/v1/agents/zed/notes\\?last=50 answered 404 unknown_agent: `),
    );
    for (const run of [missing, badAction, noTodo, noAgent]) noStack(run);
  }, 60_000);

  it("new: an ephemeral agent, its name printed", async () => {
    const made = await moniro(["new", "-m", "mock", "--backend", "mock"]);
    expect(made).toMatchObject({ code: 0, stderr: "" });
    expect(made.stdout).toMatch(/^agent-\d+\n$/);
    const name = made.stdout.trim();
    expect((await moniro(["agent", "list"])).stdout).toMatch(new RegExp(`\\n${name} +ephemeral +\\d+ +mock `));
    const noModel = await moniro(["new"]);
    expect(noModel).toEqual({
      code: 2,
      stdout: "",
      stderr: "moniro new: give the model: moniro new -m <model> (e.g. claude-sonnet-4-5), or --from <agent>\n",
    });
  }, 30_000);

  it("apply -f: created, configured, unchanged per agent; system_file inlined; a bad file named, exit 1", async () => {
    const dir = join(work, "apply");
    mkdirSync(join(dir, "prompts"), { recursive: true });
    writeFileSync(join(dir, "prompts", "fay.md"), "You are Fay.\n");
    writeFileSync(
      join(dir, "fay.yaml"),
      "name: fay\nmodel: mock\nbackend: mock\nprompt:\n  system_file: prompts/fay.md\n",
    );
    writeFileSync(join(dir, "gus.yaml"), "model: mock\nbackend: mock\n");
    const first = await moniro(["apply", "-f", dir]);
    expect(first.code).toBe(0);
    expect(first.stdout).toMatch(/^agent\/fay created \(revision \d+\)\nagent\/gus created \(revision \d+\)\n$/);
    const fay = JSON.parse((await moniro(["agent", "create", "fay2", "--from", "fay", "-o", "json"])).stdout) as {
      definition: { prompt: unknown };
    };
    expect(fay.definition.prompt).toEqual({ system: "You are Fay.\n" });

    writeFileSync(join(dir, "gus.yaml"), "model: mock\nbackend: mock\nmax_steps: 5\n");
    writeFileSync(join(dir, "hal.yaml"), "name: hal\nmodel: mock\nbakend: mock\n");
    const second = await moniro(["apply", "-f", dir]);
    expect(second.code).toBe(1);
    expect(second.stdout).toMatch(/^agent\/fay unchanged \(revision \d+\)\nagent\/gus configured \(revision \d+\)\n$/);
    expect(second.stderr).toBe(
      "agent/hal failed: apply/hal.yaml: bakend: unknown key 'bakend'; did you mean 'backend'?\n",
    );
    const json = JSON.parse((await moniro(["apply", "-f", join(dir, "gus.yaml"), "-o", "json"])).stdout) as unknown;
    expect(json).toMatchObject({ applied: [{ agent: "gus", result: "unchanged" }] });

    const missing = await moniro(["apply", "-f", join(work, "nothing-here")]);
    expect(missing).toEqual({
      code: 2,
      stdout: "",
      stderr: `moniro apply: ${join(work, "nothing-here")} does not exist: give a YAML file or a directory of them (e.g. .agents/)\n`,
    });
    noStack(second);
  }, 60_000);

  it("apply -f <dir> with a moniro.yaml: the agents it registers (files relative to it, inline), not the directory's other files", async () => {
    const dir = join(work, "project");
    mkdirSync(join(dir, "team"), { recursive: true });
    writeFileSync(join(dir, "team", "ida.yaml"), "name: ida\nmodel: mock\nbackend: mock\n");
    writeFileSync(join(dir, "jon.md"), "You are Jon.\n");
    writeFileSync(join(dir, "stray.yaml"), "name: stray\nmodel: mock\nbackend: mock\n");
    writeFileSync(
      join(dir, "moniro.yaml"),
      "agents:\n  - team/ida.yaml\n  - { name: jon, model: mock, backend: mock, prompt: { system_file: jon.md } }\n",
    );
    const applied = await moniro(["apply", "-f", dir]);
    expect(applied).toMatchObject({ code: 0, stderr: "" });
    expect(applied.stdout).toMatch(/^agent\/ida created \(revision \d+\)\nagent\/jon created \(revision \d+\)\n$/);
    const jon = await fetch(`${gateway}/v1/agents/jon/definition`, { headers: { authorization: `Bearer ${KEY}` } });
    expect(await jon.json()).toMatchObject({ source: "api", definition: { prompt: { system: "You are Jon.\n" } } });
    expect((await moniro(["agent", "info", "stray"])).code).not.toBe(0);

    writeFileSync(join(dir, "moniro.yaml"), "agentz: []\n");
    const broken = await moniro(["apply", "-f", dir]);
    expect(broken.code).toBe(1);
    expect(broken.stderr).toMatch(/^agent\/\? failed: project\/moniro\.yaml: agentz: /);
  }, 60_000);

  it("status: services, agents, states and queue depths from GET /v1/status", async () => {
    const status = await moniro(["status"]);
    expect(status.code).toBe(0);
    expect(status.stdout).toMatch(new RegExp(`^gateway ${gateway}: ready\\n\\nSERVICE +STATUS +DETAIL\\n`));
    expect(status.stdout).toMatch(/\ngateway +up +answering this request\n/);
    expect(status.stdout).toMatch(/\nscheduler +up +/);
    expect(status.stdout).toMatch(/\nsignal-bridge +down +/);
    expect(status.stdout).toMatch(
      /\nAGENT +STATE +RUNNER +INBOX \(immediate\/normal\/background\) +ERROR\n(.+\n)*alice +idle +- +0\/0\/0\n/,
    );
    const one = parse((await moniro(["status", "alice", "-o", "yaml"])).stdout) as {
      services: Record<string, { status: string }>;
      agents: Array<{ agent: string }>;
    };
    expect(one.services.nats?.status).toBe("up");
    expect(one.agents.map((a) => a.agent)).toEqual(["alice"]);
    const unknown = await moniro(["status", "zed"]);
    expect(unknown.code).toBe(4);
    expect(unknown.stderr).toMatch(
      new RegExp(
        `^moniro status: no agent named 'zed' at ${gateway}; known agents: (\\S+, )*alice, .* \\(see \`moniro agent list\`\\)\\n$`,
      ),
    );
  }, 30_000);

  it("schedule add, list, rm", async () => {
    const added = await moniro(["schedule", "add", "alice", "standup", "--every", "1h", "post", "the", "standup"]);
    expect(added).toMatchObject({ code: 0, stderr: "" });
    expect(added.stdout).toMatch(/^alice: schedule standup set \(every 1h; next run \S+\)\n$/);
    const cron = await moniro([
      "schedule",
      "add",
      "alice",
      "weekly",
      "--cron",
      "0 9 * * 1",
      "--tz",
      "Europe/Berlin",
      "report",
    ]);
    expect(cron.code).toBe(0);
    const list = await moniro(["schedule", "list", "--agent", "alice"]);
    expect(list.stdout).toMatch(/^AGENT +ID +SOURCE +WHEN +NEXT RUN +TEXT\n/);
    expect(list.stdout).toMatch(/\nalice +standup +job +every 1h +\S+ +post the standup\n/);
    expect(list.stdout).toMatch(/\nalice +weekly +job +cron 0 9 \* \* 1 \(Europe\/Berlin\) +\S+ +report\n/);
    const json = JSON.parse((await moniro(["schedule", "list", "-o", "json"])).stdout) as {
      schedules: Array<{ id: string; schedule: unknown }>;
    };
    expect(json.schedules.find((s) => s.id === "standup")?.schedule).toEqual({ everyMs: 3_600_000 });
    expect(await moniro(["schedule", "rm", "alice", "standup"])).toEqual({
      code: 0,
      stdout: "alice: schedule standup removed\n",
      stderr: "",
    });
    const again = await moniro(["schedule", "rm", "alice", "standup"]);
    expect(again.code).toBe(4);
    expect(again.stderr).toMatch(
      new RegExp(
        `^moniro schedule rm: DELETE ${gateway}/v1/agents/alice/schedules/standup answered 404 unknown_schedule: `,
      ),
    );
    const twoTimings = await moniro([
      "schedule",
      "add",
      "alice",
      "x",
      "--every",
      "5m",
      "--at",
      "2030-01-01T00:00:00Z",
      "hi",
    ]);
    expect(twoTimings).toEqual({
      code: 2,
      stdout: "",
      stderr:
        "moniro schedule add: give exactly one of --cron <expr>, --every <duration>, --at <time>, --in <duration> (got --every, --at)\n",
    });
    const badCron = await moniro(["schedule", "add", "alice", "x", "--cron", "not a cron", "hi"]);
    expect(badCron.code).toBe(2);
    expect(badCron.stderr).toMatch(
      new RegExp(`^moniro schedule add: POST ${gateway}/v1/agents/alice/schedules answered 400 `),
    );
    noStack(badCron);
  }, 30_000);

  it("dlq list and replay", async () => {
    const envelope = inboundEnvelopeSchema.parse({
      ...stamp(),
      agent: "alice",
      source: "http:carol",
      text: "from the dlq",
    });
    const record = dlqRecord({
      origin: "in",
      subject: `${stack.namespace}.in.alice`,
      reason: "rejected for the cli test",
      data: new TextEncoder().encode(JSON.stringify(envelope)),
    });
    const { seq } = await jetstream(nc).publish(`${stack.namespace}.dlq.in`, JSON.stringify(record));
    const list = await moniro(["dlq", "list"]);
    expect(list.code).toBe(0);
    expect(list.stdout).toMatch(/^SEQ +TIME +ORIGIN +SUBJECT +REPLAYABLE +REASON\n/);
    expect(list.stdout).toMatch(
      new RegExp(`\\n${seq} +\\S+ +in +${stack.namespace}\\.in\\.alice +yes +rejected for the cli test\\n`),
    );
    const page = JSON.parse((await moniro(["dlq", "list", "--limit", "1", "-o", "json"])).stdout) as {
      entries: unknown[];
    };
    expect(page.entries).toHaveLength(1);
    const replayed = await moniro(["dlq", "replay", String(seq)]);
    expect(replayed).toMatchObject({ code: 0, stderr: "" });
    expect(replayed.stdout).toBe(
      `replayed ${seq} to ${stack.namespace}.in.alice (${stack.namespace.toUpperCase()}_MONIRO_IN #${/#(\d+)/.exec(replayed.stdout)?.[1]}, envelope ${envelope.id})\n`,
    );
    await eventually(
      async () => (await moniro(["thread", "alice", "--limit", "500"])).stdout.includes("from the dlq"),
      "the replayed input in alice's thread",
    );
    const twice = await moniro(["dlq", "replay", String(seq)]);
    expect(twice.code).toBe(4);
    expect(twice.stderr).toMatch(
      new RegExp(`^moniro dlq replay: POST ${gateway}/v1/dlq/${seq}/replay answered 404 unknown_dlq_entry: `),
    );
    const bad = await moniro(["dlq", "list", "--limit", "0"]);
    expect(bad).toEqual({
      code: 2,
      stdout: "",
      stderr: `moniro dlq list: GET ${gateway}/v1/dlq?limit=0 answered 400 invalid_query: limit: must be at least 1\n`,
    });
  }, 60_000);

  it("every new command, when nothing answers: one line naming the URL, exit 3", async () => {
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const commands: Array<[string, string[]]> = [
      ["agent list", ["agent", "list"]],
      ["agent create", ["agent", "create", "zed", "-m", "mock"]],
      ["agent info", ["agent", "info", "alice"]],
      ["agent edit", ["agent", "edit", "alice"]],
      ["agent delete", ["agent", "delete", "alice", "--yes"]],
      ["agent memory", ["agent", "memory", "alice", "get", "k"]],
      ["agent notes", ["agent", "notes", "alice", "add", "x"]],
      ["agent todo", ["agent", "todo", "alice", "done", "1"]],
      ["new", ["new", "-m", "mock"]],
      ["apply", ["apply", "-f", join(work, "apply", "fay.yaml")]],
      ["status", ["status"]],
      ["schedule list", ["schedule", "list"]],
      ["schedule add", ["schedule", "add", "alice", "x", "--every", "1m", "hi"]],
      ["schedule rm", ["schedule", "rm", "alice", "x"]],
      ["dlq list", ["dlq", "list"]],
      ["dlq replay", ["dlq", "replay", "1"]],
    ];
    for (const [name, args] of commands) {
      expect(await moniro([...args, "--gateway", url]), name).toEqual({
        code: 3,
        stdout: "",
        stderr: `moniro ${name}: cannot reach the gateway at ${url} (ECONNREFUSED): ${UNREACHABLE_HINT}\n`,
      });
    }
    expect(existsSync(join(work, "no-such-dir"))).toBe(false);
  }, 60_000);
});
