import { CATALOG_TOOL_NAMES, TEAM_TOOL_NAMES, TOOL_PROFILES, toolPolicySchema } from "@moniro/config";
import { describe, expect, it } from "vitest";
import { ZodError } from "zod";
import { toolNames } from "../catalog.js";
import { runTool } from "../run-tool.js";
import { testToolContext } from "../test/test-context.js";
import { resolvePolicy, specsForPolicy } from "./policy.js";

describe("tool policy", () => {
  it("@moniro/config names exactly the catalog's tools, in the catalog's order (the policy schema validates with them)", () => {
    expect([...CATALOG_TOOL_NAMES]).toEqual([...toolNames]);
  });

  it("defaults to the full profile, which is every catalog tool", () => {
    expect(resolvePolicy().tools).toEqual([...toolNames]);
    expect([...TOOL_PROFILES.full].sort()).toEqual([...toolNames].sort());
  });

  it("profiles name their sets; every profile tool exists in the catalog", () => {
    for (const [name, tools] of Object.entries(TOOL_PROFILES)) {
      for (const tool of tools) expect(toolNames, `${name}: ${tool}`).toContain(tool);
    }
    const coding = resolvePolicy({ profile: "coding" });
    expect(coding.allowed("exec")).toBe(true);
    expect(coding.allowed("cron")).toBe(false);
    const messaging = resolvePolicy({ profile: "messaging" });
    expect(messaging.allowed("message")).toBe(true);
    expect(messaging.allowed("read")).toBe(false);
    const readonly = resolvePolicy({ profile: "readonly" });
    for (const tool of ["write", "edit", "apply_patch", "exec", "process", "memory_write", "todo_add", "cron"]) {
      expect(readonly.allowed(tool), tool).toBe(false);
    }
    expect(readonly.allowed("read")).toBe(true);
  });

  it("deny wins over profile and allow", () => {
    const policy = resolvePolicy({ profile: "coding", allow: ["cron", "exec"], deny: ["exec"] });
    expect(policy.allowed("cron")).toBe(true);
    expect(policy.allowed("exec")).toBe(false);
    expect(policy.reason("exec")).toContain("denied by this agent's tool policy");
    expect(policy.reason("exec")).toContain("deny [exec]");
  });

  it("allow without a profile is the exact set", () => {
    const policy = resolvePolicy({ allow: ["read", "message"] });
    expect(policy.tools).toEqual(["message", "read"]);
    expect(policy.reason("write")).toContain("not in this agent's tool policy (allow [read, message])");
  });

  it("sub-agents are capped at readonly whatever else they allow", () => {
    const policy = resolvePolicy({ profile: "full", allow: ["exec"], subagent: true });
    expect(policy.allowed("exec")).toBe(false);
    expect(policy.allowed("read")).toBe(true);
    expect(policy.tools).toEqual(
      toolNames.filter((name) => (TOOL_PROFILES.readonly as readonly string[]).includes(name)),
    );
    expect(policy.reason("write")).toContain("sub-agents");
  });

  it("commands have no network unless the policy says network: true", () => {
    expect(resolvePolicy({}).network).toBe(false);
    const open = resolvePolicy({ profile: "coding", network: true });
    expect(open.network).toBe(true);
    expect(open.label).toBe("profile 'coding', network");
    expect(() => resolvePolicy({ network: "yes" } as never)).toThrow(/network/);
  });

  it("rejects unknown tool names and profiles, naming the field", () => {
    const bad = toolPolicySchema.safeParse({ profile: "admin", deny: ["reed"] });
    expect(bad.success).toBe(false);
    const paths = bad.error?.issues.map((issue) => issue.path.join(".")) ?? [];
    expect(paths).toEqual(expect.arrayContaining(["profile", "deny.0"]));
    expect(bad.error?.issues.find((i) => i.path[0] === "deny")?.message).toContain("unknown tool 'reed'");
    expect(() => resolvePolicy({ allow: ["nope"] })).toThrow(ZodError);
    // Tools other components own are valid names.
    expect(resolvePolicy({ deny: ["skip", "channel_send"] }).allowed("read")).toBe(true);
  });

  it("specsForPolicy gives only allowed tools, and the full set stays small", () => {
    expect(specsForPolicy({ profile: "readonly" }).map((spec) => spec.name)).toEqual(
      resolvePolicy({ profile: "readonly" }).tools,
    );
    const team = new Set<string>(TEAM_TOOL_NAMES);
    const specs = specsForPolicy({ profile: "full" });
    // Paid on every LLM step: the whole first request must stay ≤ 3,000 tokens (≈ 4 chars per token).
    // The team tools are offered only in workspace-context cycles; they add at most ≈ 900 tokens there.
    expect(JSON.stringify(specs.filter((spec) => !team.has(spec.name))).length).toBeLessThan(8_000);
    expect(JSON.stringify(specs.filter((spec) => team.has(spec.name))).length).toBeLessThan(3_600);
    for (const spec of specsForPolicy()) {
      expect(spec.inputSchema.type).toBe("object");
      expect(spec.inputSchema).not.toHaveProperty("$schema");
      expect(spec.description.length).toBeLessThan(320);
    }
  });
});

describe("runTool", () => {
  it("names the invalid field", async () => {
    const ctx = testToolContext();
    const outcome = await runTool("read", { path: 42 }, ctx);
    expect(outcome).toMatchObject({ isError: true, errorCode: "invalid-input" });
    expect(outcome.content).toContain("'path'");
    const missing = await runTool("edit", { path: "a" }, ctx);
    expect(missing.content).toContain("'old_string'");
    expect(missing.content).toContain("'new_string'");
  });

  it("lists the tools for an unknown name", async () => {
    const outcome = await runTool("rm_rf", {}, testToolContext());
    expect(outcome).toMatchObject({ isError: true, errorCode: "unknown-tool" });
    expect(outcome.content).toContain("read, write");
  });

  it("refuses a tool the policy denies, naming the policy", async () => {
    const outcome = await runTool("exec", { command: "true" }, testToolContext(), { policy: { deny: ["exec"] } });
    expect(outcome).toMatchObject({ isError: true, errorCode: "tool-denied" });
    expect(outcome.content).toContain("deny [exec]");
    const resolved = resolvePolicy({ subagent: true });
    expect(
      (await runTool("write", { path: "x", content: "" }, testToolContext(), { policy: resolved })).errorCode,
    ).toBe("tool-denied");
  });

  it("does not start a call whose signal already fired, and turns a crash into an error result", async () => {
    const ctx = testToolContext();
    ctx.abort.abort();
    expect((await runTool("ls", {}, ctx)).errorCode).toBe("canceled");
    const crashing = testToolContext();
    crashing.personal.listMemory = async () => {
      throw new Error("the store is down");
    };
    const outcome = await runTool("memory_get", {}, crashing);
    expect(outcome).toMatchObject({ isError: true, errorCode: "tool-failed" });
    expect(outcome.content).toContain("the store is down");
  });
});
