import { describe, expect, it } from "vitest";
import type { AgentDefinition } from "../agents/agent-definition-schema.js";
import { KickoffVariableError, renderKickoff } from "./kickoff.js";
import { parseWorkflowDefinition } from "./load-workflow.js";
import {
  inlineAgentName,
  instanceKickoff,
  resolveWorkflowInstance,
  WorkflowInstanceError,
} from "./resolve-workflow.js";

function agent(name: string, fields: Partial<AgentDefinition> = {}): AgentDefinition {
  return {
    name,
    model: "claude-sonnet-4-5",
    backend: "anthropic",
    systemPrompt: `You are ${name}.`,
    file: `/p/.agents/${name}.yaml`,
    ...fields,
  } as AgentDefinition;
}

const agents = new Map([
  ["alice", agent("alice", { soul: { text: "Kind." }, max_steps: 20 })],
  ["bob", agent("bob", { max_tokens: 8000 })],
]);

const review = () =>
  parseWorkflowDefinition(
    "/p/.workflows/review.yaml",
    [
      "agents:",
      "  alice: { ref: alice }",
      "  bob: { ref: bob, role: perf, prompt: { append: Focus on speed. }, max_tokens: 16000, model: claude-opus-4 }",
      "  helper: { model: claude-haiku-4-5, role: lookups, prompt: { system: You help. } }",
      "variables: { pr: null, depth: shallow }",
      "setup: [{ shell: git diff, as: changes }]",
      "kickoff: |",
      "  @alice Review ${{ pr }} (${{ depth }}) in ${{ workflow }}:${{ tag }}:",
      "  ${{ changes }}",
    ].join("\n"),
  );

function thrown(run: () => unknown): Error {
  try {
    run();
  } catch (error) {
    return error as Error;
  }
  throw new Error("expected an error");
}

describe("resolving a workflow instance", () => {
  it("resolves refs with overrides applied and inline agents under their instance names", async () => {
    const instance = resolveWorkflowInstance(await review(), agents, "pr-7");
    expect(instance).toMatchObject({ workflow: "review", tag: "pr-7", instance: "review:pr-7", persistent: false });
    const [alice, bob, helper] = instance.agents;
    expect(alice).toEqual({ name: "alice", agent: "alice", kind: "ref", definition: agents.get("alice") });
    expect(bob).toMatchObject({
      name: "bob",
      agent: "bob",
      kind: "ref",
      role: "perf",
      promptAppend: "Focus on speed.",
      definition: { name: "bob", model: "claude-opus-4", max_tokens: 16000, systemPrompt: "You are bob." },
    });
    expect(helper).toMatchObject({
      name: "helper",
      agent: "review__pr-7__helper",
      kind: "inline",
      role: "lookups",
      definition: {
        name: "review__pr-7__helper",
        model: "claude-haiku-4-5",
        systemPrompt: "You help.",
        file: "/p/.workflows/review.yaml",
      },
    });
    // The project's own definition is not changed by an override.
    expect(agents.get("bob")?.max_tokens).toBe(8000);
  });

  it("gives two instances of one workflow different inline agents", async () => {
    const workflow = await review();
    const names = ["main", "pr-1"].map((tag) => resolveWorkflowInstance(workflow, agents, tag).agents[2]?.agent);
    expect(names).toEqual(["review__main__helper", "review__pr-1__helper"]);
  });

  it("refuses a bad tag, an unknown ref and an inline name longer than an agent name may be", async () => {
    const workflow = await review();
    expect(thrown(() => resolveWorkflowInstance(workflow, agents, "PR 1")).message).toMatch(
      /^tag 'PR 1' must be 1-63 characters of a-z/,
    );
    expect(thrown(() => resolveWorkflowInstance(workflow, agents, "a__b")).message).toContain("may not contain '__'");
    // `--` names sub-agents: `review__pr--1__helper` would be taken for a child of `review__pr`.
    expect(thrown(() => resolveWorkflowInstance(workflow, agents, "pr--1")).message).toMatch(
      /^tag 'pr--1' may not contain '--': it names sub-agents \(<parent>--<id>\).*use a single '-'$/,
    );
    const error = thrown(() => resolveWorkflowInstance(workflow, new Map([["alice", agent("alice")]])));
    expect(error).toBeInstanceOf(WorkflowInstanceError);
    expect(error.message).toContain("agents.bob.ref: no agent 'bob' is defined");
    expect(thrown(() => inlineAgentName("review", "t".repeat(50), "helper")).message).toContain(
      "longer than 63 characters: use a shorter tag",
    );
  });
});

describe("the kickoff of an instance", () => {
  it("fills holes from setup outputs, variables (defaults and given), workflow and tag", async () => {
    const text = instanceKickoff(await review(), "pr-7", { pr: "#7" }, { changes: "+1 -1" });
    expect(text).toBe("@alice Review #7 (shallow) in review:pr-7:\n+1 -1\n");
    expect(instanceKickoff(await review(), "main", { pr: "#8", depth: "deep" }, { changes: "" })).toContain(
      "#8 (deep)",
    );
  });

  it("names an undeclared variable, a required one not given, and a hole without a value", async () => {
    const workflow = await review();
    expect(thrown(() => instanceKickoff(workflow, "main", { pr: "1", dept: "x" })).message).toBe(
      "unknown variable 'dept' for workflow 'review'; did you mean 'depth'?: it declares pr, depth (add it under 'variables:' in /p/.workflows/review.yaml)",
    );
    expect(thrown(() => instanceKickoff(workflow, "main", {})).message).toBe(
      "workflow 'review' needs the variable 'pr' (it has no default): give it when starting the instance",
    );
    const missing = thrown(() => instanceKickoff(workflow, "main", { pr: "1" }));
    expect(missing).toBeInstanceOf(KickoffVariableError);
    expect(missing.message).toBe(
      "the kickoff uses ${{ changes }}, which has no value (known: depth, pr, tag, workflow): give it as a variable when starting the instance, or name a setup step 'as: changes'",
    );
  });

  it("renders text around holes as written, whitespace inside holes ignored", () => {
    expect(renderKickoff("a ${{x}} b ${{  y_2 }}${{x}}", { x: "1", y_2: "2" })).toBe("a 1 b 21");
    expect(renderKickoff("no holes, $ { { x } }", {})).toBe("no holes, $ { { x } }");
    expect(thrown(() => renderKickoff("${{ toString }}", {})).message).toContain("${{ toString }}, which has no value");
  });
});
