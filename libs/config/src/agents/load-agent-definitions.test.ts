import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { AgentDefinitionError } from "./agent-definition-error.js";
import { closestKey } from "./closest-key.js";
import { loadAgentDefinitions } from "./load-agent-definitions.js";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "moniro-config-agents-"));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

function write(file: string, lines: string[]): void {
  writeFileSync(join(dir, file), `${lines.join("\n")}\n`);
}

async function errorOf(promise: Promise<unknown>): Promise<AgentDefinitionError> {
  const error = await promise.then(
    () => undefined,
    (failure: unknown) => failure,
  );
  if (!(error instanceof AgentDefinitionError)) throw new Error(`expected an AgentDefinitionError, got ${error}`);
  return error;
}

describe("loadAgentDefinitions", () => {
  it("loads every definition keyed by name, with defaults and the system prompt from its file", async () => {
    mkdirSync(join(dir, "prompts"));
    writeFileSync(join(dir, "prompts", "alice.md"), "You are Alice.");
    write("alice.yaml", ["name: alice", "model: claude-sonnet-4-5", "prompt:", "  system_file: prompts/alice.md"]);
    write("bob.yml", [
      "name: bob",
      "model: m",
      "backend: mock",
      "prompt: { system: Be brief. }",
      "queue: steer",
      "context: thin_thread",
      "retry: { base_ms: 10, max_attempts: 3 }",
      "schedule: '*/5 * * * *'",
      "tools: { profile: readonly, deny: [exec] }",
    ]);
    write("notes.txt", ["not a definition"]);
    const definitions = await loadAgentDefinitions(dir);
    expect([...definitions.keys()]).toEqual(["alice", "bob"]);
    expect(definitions.get("alice")).toMatchObject({
      backend: "anthropic",
      systemPrompt: "You are Alice.",
      file: join(dir, "alice.yaml"),
    });
    expect(definitions.get("bob")).toMatchObject({
      backend: "mock",
      systemPrompt: "Be brief.",
      queue: { mode: "steer" },
      context: { type: "thin_thread" },
      retry: { base_ms: 10, max_attempts: 3 },
      schedule: { cron: "*/5 * * * *" },
      tools: { profile: "readonly", deny: ["exec"] },
    });
  });

  it("reads a full schedule block: every_ms wakeup in a workspace, heartbeat with its reply target", async () => {
    write("alice.yaml", [
      "name: alice",
      "model: m",
      "schedule:",
      "  every_ms: 60000",
      "  reason: check the board",
      "  workspace: review:pr-1",
      "  heartbeat_ms: 30000",
      "  heartbeat_to: signal:+15551234567",
    ]);
    expect((await loadAgentDefinitions(dir)).get("alice")?.schedule).toEqual({
      every_ms: 60000,
      reason: "check the board",
      workspace: "review:pr-1",
      heartbeat_ms: 30000,
      heartbeat_to: "signal:+15551234567",
    });
  });

  it("refuses schedule fields that cannot apply, naming each with the fix", async () => {
    write("alice.yaml", ["name: alice", "model: m", "schedule:", "  every_ms: 60000", "  workspace: Review:PR 1"]);
    expect((await errorOf(loadAgentDefinitions(dir))).issues).toEqual([
      {
        path: "schedule.workspace",
        message:
          "must be '<workflow>' (every running instance of it) or '<workflow>:<tag>' (e.g. 'review:pr-123'), names of a-z, 0-9, '_' or '-'; leave it out for the personal context",
      },
    ]);
    write("alice.yaml", ["name: alice", "model: m", "schedule:", "  every_ms: 60000", "  workspace: personal"]);
    expect((await errorOf(loadAgentDefinitions(dir))).issues).toEqual([
      {
        path: "schedule.workspace",
        message: "'personal' is the personal context, not a workflow: leave 'workspace' out for it",
      },
    ]);
    write("alice.yaml", [
      "name: alice",
      "model: m",
      "schedule: { every_ms: 60000, tz: Europe/Berlin, heartbeat_to: 'http:ops' }",
    ]);
    expect((await errorOf(loadAgentDefinitions(dir))).issues).toEqual([
      { path: "schedule.tz", message: "'tz' applies to 'cron' only" },
      { path: "schedule.heartbeat_to", message: "'heartbeat_to' needs 'heartbeat_ms'" },
    ]);
    // A pattern or zone the scheduler cannot run is refused where it is written, not only logged by the scheduler.
    write("alice.yaml", ["name: alice", "model: m", "schedule: { cron: '99 99 * * *', tz: Mars/Olympus }"]);
    expect((await errorOf(loadAgentDefinitions(dir))).issues).toEqual([
      {
        path: "schedule.cron",
        message:
          "'99 99 * * *' is not a cron pattern (Constraint error, got value 99 expected range 0-59): 5 fields (minute hour day month weekday), or 6 with seconds first, e.g. '0 9 * * 1-5'",
      },
      {
        path: "schedule.tz",
        message: "unknown time zone 'Mars/Olympus': an IANA zone such as 'Europe/Berlin' or 'UTC'",
      },
    ]);
    write("alice.yaml", [
      "name: alice",
      "model: m",
      "schedule: { every_ms: 400000000000, heartbeat_ms: 400000000000 }",
    ]);
    expect((await errorOf(loadAgentDefinitions(dir))).issues).toEqual([
      { path: "schedule.every_ms", message: "must be at most 10 years (315576000000 ms)" },
      { path: "schedule.heartbeat_ms", message: "must be at most 10 years (315576000000 ms)" },
    ]);
    write("alice.yaml", ["name: alice", "model: m", "schedule: '*/10 * * * * *'"]);
    expect((await loadAgentDefinitions(dir)).get("alice")?.schedule).toMatchObject({ cron: "*/10 * * * * *" });
    write("alice.yaml", ["name: alice", "model: m", "schedule: { heartbeat_ms: 5000, reason: hi }"]);
    expect((await errorOf(loadAgentDefinitions(dir))).issues).toEqual([
      { path: "schedule.reason", message: "'reason' belongs to a wakeup: add 'cron' or 'every_ms'" },
    ]);
  });

  it("refuses prompt.system together with prompt.system_file, naming file, field and fix", async () => {
    write("alice.yaml", ["name: alice", "model: m", "prompt:", "  system: hi", "  system_file: a.md"]);
    const error = await errorOf(loadAgentDefinitions(dir));
    expect(error.message).toMatch(/alice\.yaml: prompt: set either 'system' or 'system_file', not both$/);
    expect(error.issues).toEqual([{ path: "prompt", message: "set either 'system' or 'system_file', not both" }]);
  });

  it("names a missing prompt.system_file and says the path is relative to the YAML file", async () => {
    write("alice.yaml", ["name: alice", "model: m", "prompt:", "  system_file: missing.md"]);
    const error = await errorOf(loadAgentDefinitions(dir));
    expect(error.message).toMatch(/alice\.yaml: prompt\.system_file: file .*missing\.md does not exist/);
    expect(error.message).toContain("relative to the YAML file");
  });

  it("requires name to equal the file name", async () => {
    write("cy.yaml", ["name: cyrus", "model: m"]);
    const error = await errorOf(loadAgentDefinitions(dir));
    expect(error.message).toContain("cy.yaml: name: name 'cyrus' must match the file name ('cy')");
    expect(error.message).toContain("set 'name: cy' or rename the file to cyrus.yaml");
  });

  it("rejects a name that cannot be a subject token", async () => {
    write("Al.ice.yaml", ["name: Al.ice", "model: m"]);
    const error = await errorOf(loadAgentDefinitions(dir));
    expect(error.issues[0]?.path).toBe("name");
    expect(error.message).toContain("NATS subject token");
  });

  it("refuses a name with '--': such names are reserved for sub-agents", async () => {
    write("boss--x1.yaml", ["name: boss--x1", "model: m"]);
    const error = await errorOf(loadAgentDefinitions(dir));
    expect(error.issues[0]?.path).toBe("name");
    expect(error.message).toContain("may not contain '--': names with it are reserved for sub-agents");
  });

  it("refuses a name with '__': such names are reserved for the inline agents of workflow instances", async () => {
    write("a__b.yaml", ["name: a__b", "model: m"]);
    const error = await errorOf(loadAgentDefinitions(dir));
    expect(error.issues).toEqual([
      {
        path: "name",
        message:
          "may not contain '__': names with it are reserved for the inline agents of workflow instances (<workflow>__<tag>__<agent>); use a single '_'",
      },
    ]);
  });

  it("names an unknown key and suggests the closest known one, at any depth", async () => {
    write("alice.yaml", [
      "name: alice",
      "model: m",
      "max_step: 5",
      "prompt: { sytem: hi }",
      "tools: { denny: [exec] }",
    ]);
    const error = await errorOf(loadAgentDefinitions(dir));
    expect(error.issues).toEqual(
      expect.arrayContaining([
        { path: "max_step", message: "unknown key 'max_step'; did you mean 'max_steps'?" },
        { path: "prompt.sytem", message: "unknown key 'sytem'; did you mean 'system'?" },
        { path: "tools.denny", message: "unknown key 'denny'; did you mean 'deny'?" },
      ]),
    );
    expect(error.message).toMatch(/alice\.yaml: invalid agent definition \(3 problems\)/);
  });

  it("lists every bad field of a file at once: missing model, bad number, bad enum with a suggestion", async () => {
    write("bob.yaml", ["name: bob", "max_steps: -1", "backend: antropic", "queue: { mode: steer }", "threads: 3"]);
    const error = await errorOf(loadAgentDefinitions(dir));
    const byPath = Object.fromEntries(error.issues.map((issue) => [issue.path, issue.message]));
    expect(byPath.model).toBe("is required: add the model id, e.g. 'model: claude-sonnet-4-5'");
    expect(byPath.max_steps).toBe("must be greater than 0");
    expect(byPath.backend).toBe("must be one of anthropic, mock (got 'antropic'); did you mean 'anthropic'?");
    expect(byPath.threads).toMatch(/^must be one of unified, per-context/);
  });

  it("refuses an unknown tool in the tools policy, naming the list entry", async () => {
    write("alice.yaml", ["name: alice", "model: m", "tools:", "  allow: [reed]"]);
    const error = await errorOf(loadAgentDefinitions(dir));
    expect(error.issues[0]?.path).toBe("tools.allow.0");
    expect(error.message).toContain("unknown tool 'reed'");
  });

  it("reports a YAML syntax error with its line and column", async () => {
    write("alice.yaml", ["name: alice", "model: m", "prompt:", "  system: [unclosed"]);
    const error = await errorOf(loadAgentDefinitions(dir));
    expect(error.message).toMatch(/alice\.yaml: not valid YAML at line \d+, column \d+: /);
  });

  it("says a file with a second YAML document holds one definition only, where the '---' is, and what to do", async () => {
    write("alice.yaml", ["name: alice", "model: m", "---", "name: bob", "model: m"]);
    const error = await errorOf(loadAgentDefinitions(dir));
    expect(error.issues).toEqual([
      {
        path: "(file)",
        message:
          "holds more than one YAML document (a '---' at line 3, column 1): one definition per file; remove the '---' and what follows, or move it to a file of its own",
      },
    ]);
    expect(error.message).not.toContain("parseAllDocuments");
  });

  it("names the file of an alias to no anchor, and of a file that cannot be read, with the other files' problems", async () => {
    write("alice.yaml", ["name: alice", "model: *m"]);
    mkdirSync(join(dir, "bob.yaml"));
    write("carol.yaml", ["name: carol", "model: m"]);
    const error = await errorOf(loadAgentDefinitions(dir));
    expect(error.message).toMatch(/alice\.yaml: not valid YAML: Unresolved alias/);
    expect(error.message).toMatch(/bob\.yaml: cannot be read \(EISDIR[^)]*\): make it a readable file/);
  });

  it("explains an empty file and a file that is not a mapping", async () => {
    write("alice.yaml", [""]);
    expect((await errorOf(loadAgentDefinitions(dir))).message).toContain(
      "alice.yaml: the file is empty: write at least 'name: alice' and 'model: <model id>'",
    );
    write("alice.yaml", ["- name: alice"]);
    expect((await errorOf(loadAgentDefinitions(dir))).message).toContain("must be a mapping of keys");
  });

  it("refuses two files defining the same agent", async () => {
    write("alice.yaml", ["name: alice", "model: m"]);
    write("alice.yml", ["name: alice", "model: m"]);
    const error = await errorOf(loadAgentDefinitions(dir));
    expect(error.message).toMatch(/alice\.yml: name: agent 'alice' is also defined in .*alice\.yaml/);
  });

  it("reports every broken file in one error", async () => {
    write("alice.yaml", ["name: alice"]);
    write("bob.yaml", ["name: bob", "model: m", "queue: fifo"]);
    const error = await errorOf(loadAgentDefinitions(dir));
    expect(error.message).toMatch(/alice\.yaml: model: is required/);
    expect(error.message).toMatch(/bob\.yaml: queue\.mode: must be one of inject, steer/);
  });

  it("says so when the directory is missing, or is a file", async () => {
    const missing = await errorOf(loadAgentDefinitions(join(dir, "nope")));
    expect(missing.kind).toBe("missing-dir");
    expect(missing.message).toContain("the agents directory does not exist");
    expect(missing.message).toContain("MONIRO_AGENTS_DIR");
    write("file.yaml", ["x: 1"]);
    const notDir = await errorOf(loadAgentDefinitions(join(dir, "file.yaml")));
    expect(notDir.message).toContain("is not a directory");
  });
});

describe("closestKey", () => {
  it("suggests near misses and nothing for unrelated words", () => {
    expect(closestKey("systemFile", ["system", "system_file"])).toBe("system_file");
    expect(closestKey("modle", ["name", "model"])).toBe("model");
    expect(closestKey("zzzzzz", ["name", "model"])).toBeUndefined();
  });
});
