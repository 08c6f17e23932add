import { describe, expect, it } from "vitest";
import {
  formatSendTarget,
  notAParticipant,
  parseSendTarget,
  refusalText,
  SendTargetError,
  sendTargetSchema,
  workflowNotRunning,
} from "./send-target.js";

function errorOf(target: string): SendTargetError {
  try {
    parseSendTarget(target);
  } catch (error) {
    if (error instanceof SendTargetError) return error;
    throw error;
  }
  throw new Error(`'${target}' parsed`);
}

describe("send targets", () => {
  it("reads a bare name as a DM", () => {
    expect(parseSendTarget("alice")).toEqual({ kind: "dm", agent: "alice" });
  });

  it("reads @workflow[:tag] as a channel post, the tag defaulting to main", () => {
    expect(parseSendTarget("@review")).toEqual({ kind: "channel", workflow: "review", tag: "main" });
    expect(parseSendTarget("@review:pr-123")).toEqual({ kind: "channel", workflow: "review", tag: "pr-123" });
  });

  it("reads agent@workflow[:tag] as the agent working in that workspace", () => {
    expect(parseSendTarget("alice@review")).toEqual({
      kind: "workspace-agent",
      agent: "alice",
      workflow: "review",
      tag: "main",
    });
    expect(parseSendTarget("alice@review:pr-123")).toMatchObject({ agent: "alice", tag: "pr-123" });
  });

  it("formats each kind back to its canonical text", () => {
    for (const [text, canonical] of [
      ["alice", "alice"],
      ["@review", "@review:main"],
      ["bob@deploy:v2", "bob@deploy:v2"],
    ] as const) {
      expect(formatSendTarget(parseSendTarget(text))).toBe(canonical);
    }
  });

  it("names what is wrong in each bad target", () => {
    const cases: Array<[string, string]> = [
      ["", "invalid target '': the target is empty: write 'alice' (a DM)"],
      ["alice bob", "a target has no spaces"],
      ["@", "the workflow is missing"],
      ["alice@", "the workflow is missing"],
      ["@:pr-1", "the workflow is missing"],
      ["@review:", "the tag is missing"],
      ["a@b@c", "a target has one '@' at most"],
      ["@review:a:b", "with one ':' at most"],
      [
        "Alice",
        "the agent 'Alice' must be 1-63 characters of a-z, 0-9, '_' or '-', starting with a letter or digit (names are lower-case: 'alice')",
      ],
      ["alice@re.view", "the workflow 're.view' must be 1-63 characters"],
      ["alice@review:PR 1", "a target has no spaces"],
      ["@review:pr.1", "the tag 'pr.1' must be"],
      [
        "alice:review",
        "a DM target is a bare agent name; for an agent in a workspace write 'alice@<workflow>[:<tag>]'",
      ],
      ["@personal", "'personal' is the personal context, not a workflow"],
    ];
    for (const [target, message] of cases) expect(errorOf(target).message, target).toContain(message);
  });

  it("parses a request body's target with zod, the issue saying what is wrong", () => {
    expect(sendTargetSchema.parse("bob@deploy")).toEqual({
      kind: "workspace-agent",
      agent: "bob",
      workflow: "deploy",
      tag: "main",
    });
    const result = sendTargetSchema.safeParse("@re view");
    expect(result.success).toBe(false);
    expect(result.error?.issues[0]?.message).toContain("a target has no spaces");
    expect(sendTargetSchema.safeParse(3).error?.issues[0]?.message).toContain("must be a string");
  });

  it("gives the seed's two refusals with their hints", () => {
    expect(refusalText(workflowNotRunning("review"))).toBe(
      'workflow "review" is not running.\nStart it with: moniro start review',
    );
    expect(workflowNotRunning("review", "pr-123")).toEqual({
      code: "workflow_not_running",
      message: 'workflow "review:pr-123" is not running.',
      hint: "Start it with: moniro start review --tag pr-123",
    });
    expect(refusalText(notAParticipant("alice", "review"))).toBe(
      'alice is not a participant in workflow "review".\nAdd alice to .workflows/review.yaml first.',
    );
  });

  it("names the required variables in the start hint and the workflow's real file", () => {
    expect(workflowNotRunning("review", "pr-7", ["pr", "repo"]).hint).toBe(
      "Start it with: moniro start review --tag pr-7 --var pr=<value> --var repo=<value>",
    );
    expect(notAParticipant("bob", "review", "/srv/flows/review.yaml").hint).toBe(
      "Add bob to /srv/flows/review.yaml first.",
    );
  });
});
