import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { loadWorkflowDefinition, loadWorkflowDefinitions } from "./load-workflow.js";
import { WorkflowDefinitionError } from "./workflow-definition-error.js";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "moniro-config-workflows-"));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

function write(file: string, lines: string[]): string {
  const path = join(dir, file);
  writeFileSync(path, `${lines.join("\n")}\n`);
  return path;
}

async function errorOf(file: string, lines: string[]): Promise<WorkflowDefinitionError> {
  const path = write(file, lines);
  const error = await loadWorkflowDefinition(path).then(
    () => undefined,
    (failure: unknown) => failure,
  );
  if (!(error instanceof WorkflowDefinitionError)) throw new Error(`expected a WorkflowDefinitionError, got ${error}`);
  return error;
}

/** The issues of a file as `path: message`, for compact assertions. */
async function issuesOf(lines: string[], file = "review.yaml"): Promise<string[]> {
  return (await errorOf(file, lines)).issues.map((issue) => `${issue.path}: ${issue.message}`);
}

describe("a workflow file", () => {
  it("loads the seed's review workflow: refs, a ref with overrides, inline agents, setup, kickoff", async () => {
    mkdirSync(join(dir, "prompts"));
    writeFileSync(join(dir, "prompts", "db.md"), "You tune queries.");
    const file = write("review.yaml", [
      "name: review",
      "agents:",
      "  alice: { ref: alice }",
      "  bob:",
      "    ref: bob",
      "    role: performance reviewer",
      "    prompt:",
      "      append: Focus on performance.",
      "    max_tokens: 16000",
      "  helper:",
      "    model: claude-haiku-4-5",
      "    prompt:",
      "      system: You help with quick lookups.",
      "  specialist:",
      "    model: claude-sonnet-4-5",
      "    prompt: { system_file: prompts/db.md }",
      "    soul: Calm and precise.",
      "setup:",
      "  - shell: git diff main...HEAD",
      "    as: changes",
      "kickoff: |",
      "  @alice Review these changes:",
      "  ${{ changes }}",
      "  @bob Check for performance regressions.",
    ]);
    const workflow = await loadWorkflowDefinition(file);
    expect(workflow).toMatchObject({
      name: "review",
      file,
      workspace: { persistent: false },
      setup: [{ shell: "git diff main...HEAD", as: "changes" }],
      variables: {},
    });
    expect(workflow.kickoff).toContain("${{ changes }}");
    expect([...workflow.agents.keys()]).toEqual(["alice", "bob", "helper", "specialist"]);
    expect(workflow.agents.get("alice")).toEqual({ kind: "ref", key: "alice", ref: "alice", overrides: {} });
    expect(workflow.agents.get("bob")).toEqual({
      kind: "ref",
      key: "bob",
      ref: "bob",
      role: "performance reviewer",
      promptAppend: "Focus on performance.",
      overrides: { max_tokens: 16000 },
    });
    expect(workflow.agents.get("helper")).toMatchObject({
      kind: "inline",
      systemPrompt: "You help with quick lookups.",
      fields: { model: "claude-haiku-4-5", backend: "anthropic" },
    });
    expect(workflow.agents.get("specialist")).toMatchObject({
      kind: "inline",
      systemPrompt: "You tune queries.",
      fields: { soul: { text: "Calm and precise." } },
    });
  });

  it("reads a persistent workspace and declared variables", async () => {
    const workflow = await loadWorkflowDefinition(
      write("deploy.yaml", [
        "agents: { alice: { ref: alice } }",
        "workspace: { persistent: true }",
        "variables: { version: null, env: staging }",
        "kickoff: '@alice deploy ${{ version }} to ${{env}} (${{ workflow }}:${{ tag }})'",
      ]),
    );
    expect(workflow).toMatchObject({
      name: "deploy",
      workspace: { persistent: true },
      variables: { version: null, env: "staging" },
    });
  });

  describe("enforces the seed's validation table, naming file, field and fix", () => {
    it("system XOR system_file, never both", async () => {
      const error = await errorOf("review.yaml", [
        "agents:",
        "  helper: { model: m, prompt: { system: hi, system_file: a.md } }",
      ]);
      expect(error.message).toMatch(
        /review\.yaml: agents\.helper\.prompt: set either 'system' or 'system_file', not both$/,
      );
    });

    it("a ref agent takes only prompt.append", async () => {
      expect(await issuesOf(["agents:", "  bob: { ref: bob, prompt: { system: hi } }"])).toEqual([
        "agents.bob.prompt.system: a ref agent cannot set 'system': its system prompt comes from .agents/bob.yaml: use 'prompt.append' to add to it here, or drop 'ref' to define the agent inline",
      ]);
      expect(await issuesOf(["agents:", "  bob: { ref: bob, prompt: { system_file: b.md } }"])).toEqual([
        expect.stringMatching(/^agents\.bob\.prompt\.system_file: a ref agent cannot set 'system_file'/),
      ]);
    });

    it("an inline agent takes only prompt.system / system_file", async () => {
      expect(await issuesOf(["agents:", "  helper: { model: m, prompt: { append: more } }"])).toEqual([
        "agents.helper.prompt.append: 'append' extends the prompt of a ref agent: an inline agent sets 'prompt.system' or 'prompt.system_file' (or add 'ref: <agent>' to use an agent of .agents/)",
      ]);
    });

    it("a ref agent cannot define soul", async () => {
      expect(await issuesOf(["agents:", "  alice: { ref: alice, soul: kind }"])).toEqual([
        "agents.alice.soul: a ref agent cannot define 'soul': its soul comes from .agents/alice.yaml: remove it here, or drop 'ref' to define the agent inline",
      ]);
    });

    it("an entry is a ref agent when it has ref, else inline (and then needs a model)", async () => {
      expect(await issuesOf(["agents:", "  helper: { prompt: { system: hi } }"])).toEqual([
        "agents.helper.model: is required for an inline agent: add 'model: <model id>', or add 'ref: <agent>' to use an agent of .agents/",
      ]);
      expect(await issuesOf(["agents:", "  alice: claude"])).toEqual([
        "agents.alice: must be a mapping: '{ ref: alice }' for an agent of .agents/, or '{ model: …, prompt: { system: … } }' for an inline one",
      ]);
    });
  });

  it("lets a workflow override only model, backend, max_tokens and max_steps of a ref agent", async () => {
    expect(
      await issuesOf([
        "agents:",
        "  bob: { ref: bob, model: m2, backend: mock, max_steps: 5, queue: steer, schedule: '* * * * *', max_step: 3 }",
      ]),
    ).toEqual([
      "agents.bob.schedule: schedule belong to the agent's own file (.agents/bob.yaml), not to a workflow: remove it here",
      "agents.bob.queue: 'queue' cannot be overridden in a workflow: set it in .agents/bob.yaml (a workflow may set model, backend, max_tokens, max_steps, role and prompt.append)",
      "agents.bob.max_step: unknown key 'max_step'; did you mean 'max_steps'?",
    ]);
    expect(await issuesOf(["agents:", "  bob: { ref: bob, max_tokens: 0, backend: antropic }"])).toEqual([
      "agents.bob.backend: must be one of anthropic, mock (got 'antropic'); did you mean 'anthropic'?",
      "agents.bob.max_tokens: must be greater than 0",
    ]);
  });

  it("refuses a ref under another key, and bad names", async () => {
    expect(await issuesOf(["agents:", "  reviewer: { ref: alice }"])).toEqual([
      "agents.reviewer.ref: a ref agent takes part under its own name: write 'alice: { ref: alice }' (the key 'reviewer' must equal 'ref')",
    ]);
    expect(await issuesOf(["agents:", "  Helper: { model: m }", "  a__b: { model: m }"])).toEqual([
      expect.stringMatching(/^agents\.Helper: the name 'Helper' must be 1-63 characters of a-z/),
      expect.stringMatching(/^agents\.a__b: the name 'a__b' may not contain '__'/),
      expect.stringMatching(/^agents\.a__b: the name 'a__b' may not contain '__'/),
    ]);
  });

  it("refuses schedules and webhooks on inline agents, and a name field", async () => {
    expect(await issuesOf(["agents:", "  helper: { name: helper, model: m, schedule: '* * * * *' }"])).toEqual([
      "agents.helper.name: an inline agent is named by its key under 'agents': remove 'name'",
      "agents.helper.schedule: an inline agent lives only while its instance runs and takes no schedule: define the agent in .agents/ and use 'ref'",
    ]);
  });

  it("names a missing inline system_file relative to the workflow file", async () => {
    expect(await issuesOf(["agents:", "  helper: { model: m, prompt: { system_file: nope.md } }"])).toEqual([
      expect.stringMatching(
        /^agents\.helper\.prompt\.system_file: file .*nope\.md does not exist: create it, or fix the path \(it is relative to the YAML file\)$/,
      ),
    ]);
  });

  it("requires agents, a name that matches the file, and a file name that is a workflow name", async () => {
    expect(await issuesOf(["kickoff: hi"])).toEqual([
      "agents: is required: list the agents, e.g. 'agents: { alice: { ref: alice } }'",
    ]);
    expect(await issuesOf(["agents: {}"])).toEqual([
      "agents: must list at least one agent, e.g. 'alice: { ref: alice }'",
    ]);
    expect(await issuesOf(["name: revue", "agents: { alice: { ref: alice } }"])).toEqual([
      "name: name 'revue' must match the file name ('review'): set 'name: review' or rename the file to revue.yaml",
    ]);
    expect((await errorOf("Review.yaml", ["agents: { alice: { ref: alice } }"])).message).toMatch(
      /Review\.yaml: the file name 'Review' is the workflow's name and must be 1-63 characters .*: rename the file$/,
    );
    expect((await errorOf("personal.yaml", ["agents: { alice: { ref: alice } }"])).message).toContain(
      "'personal' names the personal context",
    );
  });

  it("refuses a workflow name with '--': its inline agents would be taken for another agent's sub-agents", async () => {
    expect((await errorOf("code--review.yaml", ["agents: { helper: { model: m } }"])).message).toMatch(
      /code--review\.yaml: the file name 'code--review' is the workflow's name and may not contain '--': it names sub-agents \(<parent>--<id>\).*use a single '-': rename the file$/,
    );
  });

  it("names unknown top-level and workspace keys with the closest known one", async () => {
    expect(
      await issuesOf(["agents: { alice: { ref: alice } }", "kickof: hi", "workspace: { persistant: true }"]),
    ).toEqual([
      "workspace.persistant: unknown key 'persistant'; did you mean 'persistent'?",
      "kickof: unknown key 'kickof'; did you mean 'kickoff'?",
    ]);
    expect(await issuesOf(["agents: { alice: { ref: alice } }", "workspace: { persistent: yes please }"])).toEqual([
      'workspace.persistent: must be a boolean, not string "yes please"',
    ]);
  });

  it("checks setup steps: a command, a name fit for ${{ }}, each name once, no holes in commands", async () => {
    expect(
      await issuesOf([
        "agents: { alice: { ref: alice } }",
        "setup:",
        "  - { as: x }",
        "  - { shell: ls, as: 'my-files' }",
        "  - { shell: 'echo ${{ tag }}', as: out }",
        "  - { shell: pwd, as: out }",
        "  - { shell: pwd, run: now }",
      ]),
    ).toEqual([
      "setup.0.shell: is required (a string)",
      "setup.1.as: must be a name of letters, digits and '_' (used as ${{ name }} in the kickoff)",
      "setup.4.run: unknown key 'run'; known keys here: shell, as",
    ]);
    expect(
      await issuesOf([
        "agents: { alice: { ref: alice } }",
        "setup:",
        "  - { shell: 'echo ${{ tag }}', as: out }",
        "  - { shell: pwd, as: out }",
        "  - { shell: pwd, as: tag }",
      ]),
    ).toEqual([
      "setup.0.shell: '${{ }}' is filled in the kickoff only; a setup step's command is run as written",
      "setup.1.as: 'out' also names setup step 0: give each step its own name",
      "setup.2.as: 'tag' is given by every instance (its tag): choose another name",
    ]);
    // More steps than a tool-executor takes in one request: refused in the file, not at a start.
    const steps = Array.from({ length: 51 }, (_, i) => `  - { shell: 'echo ${i}' }`);
    expect(await issuesOf(["agents: { alice: { ref: alice } }", "setup:", ...steps])).toEqual([
      "setup: must have at most 50 steps: join commands into one step's shell (a && b)",
    ]);
  });

  it("checks the kickoff: every hole names a setup output or variable, every @mention an agent", async () => {
    expect(
      await issuesOf([
        "agents: { alice: { ref: alice }, bob: { ref: bob } }",
        "setup: [{ shell: git diff, as: changes }]",
        "variables: { pr: null, workflow: x }",
        "kickoff: '@alice see ${{ chnages }} for ${{ pr }}; @bobb and @carol too. npm i @types/node'",
      ]),
    ).toEqual([
      "variables.workflow: 'workflow' is given by every instance (its workflow): choose another name",
      "kickoff: ${{ chnages }} names no setup output or variable; did you mean 'changes'?: name a setup step 'as: chnages', or declare it under 'variables:'",
      "kickoff: @bobb is not an agent of this workflow; did you mean @bob?: add 'bobb' under 'agents', or fix the mention",
      "kickoff: @carol is not an agent of this workflow: add 'carol' under 'agents', or fix the mention",
    ]);
    expect(
      await issuesOf(["agents: { alice: { ref: alice } }", "kickoff: |", "  hi", "  ${{ a b }} and ${{ c"]),
    ).toEqual(["kickoff: '${{ a b }}' on line 2 must hold one name (letters, digits, '_'), e.g. '${{ changes }}'"]);
    expect(await issuesOf(["agents: { alice: { ref: alice } }", "kickoff: 'start ${{ tag'"])).toEqual([
      "kickoff: '${{' on line 1 is not closed: write '${{ name }}'",
    ]);
  });

  it("reports invalid YAML with its position, an empty file and a list", async () => {
    expect((await errorOf("review.yaml", ["agents:", "  alice: { ref: [unclosed"])).message).toMatch(
      /review\.yaml: not valid YAML at line \d+, column \d+: /,
    );
    expect((await errorOf("review.yaml", ["agents: { alice: { ref: *a } }"])).message).toMatch(
      /review\.yaml: not valid YAML: Unresolved alias/,
    );
    expect((await errorOf("review.yaml", [""])).message).toContain("review.yaml: the file is empty");
    expect((await errorOf("review.yaml", ["- alice"])).message).toContain("must be a mapping of keys");
  });

  it("discovers every file of a .workflows directory, reporting every broken one", async () => {
    write("review.yaml", ["agents: { alice: { ref: alice } }"]);
    write("deploy.yml", ["agents: { bob: { ref: bob } }"]);
    expect([...(await loadWorkflowDefinitions(dir)).keys()]).toEqual(["deploy", "review"]);
    write("bad.yaml", ["agents: { x: { ref: x, soul: s } }"]);
    write("worse.yaml", ["agents: []"]);
    const failure = await loadWorkflowDefinitions(dir).then(
      () => new Error("expected the broken files to be refused"),
      (error: unknown) => error as Error,
    );
    expect(failure.message).toMatch(/bad\.yaml: agents\.x\.soul: a ref agent cannot define 'soul'/);
    expect(failure.message).toMatch(/worse\.yaml: agents: must be a mapping \(key: value lines\), not a list/);
    expect(await loadWorkflowDefinitions(join(dir, "missing"))).toEqual(new Map());
  });
});
