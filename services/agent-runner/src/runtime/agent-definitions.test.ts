import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadAgentDefinitions as loadDefinitions } from "@moniro/config";
import { ScriptedLlm } from "@moniro/ports/test";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { loopSettingsOf, runtimeAgentOf } from "./agent-definitions.js";

/** The definitions of `dir` as the gateway syncs them into the registry (the same loader), in name order. */
const loadAgentDefinitions = async (dir: string) => [...(await loadDefinitions(dir)).values()];

describe("agent definitions → loop settings", () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "moniro-agents-"));
  });
  afterEach(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  it("maps the YAML fields onto LoopSettings, with message and skip always among the tools", async () => {
    writeFileSync(join(dir, "soul.md"), "You are Ada, a careful engineer.");
    writeFileSync(
      join(dir, "ada.yaml"),
      [
        "name: ada",
        "model: claude-test",
        "prompt:",
        "  system_file: soul.md",
        "soul: curious",
        "max_tokens: 2048",
        "max_steps: 12",
        "queue: steer",
        "context:",
        "  type: thin_thread",
        "  threads: per-context",
        "  turns: 5",
        "  personal_tokens: 600",
        "  recent_notes: 2",
        "schedule: '*/5 * * * *'",
      ].join("\n"),
    );
    const [definition] = await loadAgentDefinitions(dir);
    if (!definition) throw new Error("expected a definition");
    const settings = loopSettingsOf(definition);
    expect(settings).toMatchObject({
      model: "claude-test",
      maxTokens: 2048,
      maxSteps: 12,
      queue: "steer",
      threads: "per-context",
      context: { type: "thin_thread", turns: 5 },
    });
    expect(settings.systemPrompt).toBe("You are Ada, a careful engineer.");
    expect(settings.soul).toEqual({ text: "curious" });
    expect(settings.personal).toEqual({ maxTokens: 600, recentNotes: 2 });
    expect(settings.tools.map((tool) => tool.name).slice(0, 2)).toEqual(["message", "skip"]);
  });

  it("reads the structured soul and the auto_memory block; bad ones are named with the fix", async () => {
    writeFileSync(
      join(dir, "rev.yaml"),
      [
        "name: rev",
        "model: claude-test",
        "soul:",
        "  role: code-reviewer",
        "  expertise: [typescript, testing]",
        "  style: thorough but constructive",
        "  principles:",
        "    - Explain the why",
        "auto_memory:",
        "  model: claude-fast",
      ].join("\n"),
    );
    const [definition] = await loadAgentDefinitions(dir);
    expect(definition?.auto_memory).toEqual({ enabled: true, model: "claude-fast" });
    expect(loopSettingsOf(definition as NonNullable<typeof definition>).soul).toEqual({
      role: "code-reviewer",
      expertise: ["typescript", "testing"],
      style: "thorough but constructive",
      principles: ["Explain the why"],
    });
    writeFileSync(
      join(dir, "rev.yaml"),
      [
        "name: rev",
        "model: m",
        "soul:",
        "  principals: [x]",
        "  expertise: typescript",
        "auto_memory:",
        "  enabled: yes please",
      ].join("\n"),
    );
    const error = await loadAgentDefinitions(dir).catch((thrown: Error) => thrown);
    expect(String(error)).toMatch(/rev\.yaml/);
    expect(String(error)).toMatch(/soul\.principals.*did you mean 'principles'/);
    expect(String(error)).toMatch(/soul\.expertise.*must be a list of areas/);
    expect(String(error)).toMatch(/auto_memory\.enabled/);
    rmSync(join(dir, "rev.yaml"));
  });

  it("runs a definition with its provider, and with auto-memory only when its auto_memory block is on", async () => {
    writeFileSync(join(dir, "ada.yaml"), "name: ada\nmodel: claude-test\nauto_memory:\n  model: claude-fast\n");
    writeFileSync(join(dir, "bob.yaml"), "name: bob\nmodel: claude-test\n");
    const llm = new ScriptedLlm({ text: "" });
    const [ada, bob] = (await loadAgentDefinitions(dir)).map((definition) =>
      runtimeAgentOf(definition, { llmFor: () => llm }),
    );
    expect(ada).toMatchObject({ name: "ada", llm, autoMemory: { model: "claude-fast" } });
    expect(ada?.settings.model).toBe("claude-test");
    expect(bob?.name).toBe("bob");
    expect(bob?.autoMemory).toBeUndefined();
  });
});
