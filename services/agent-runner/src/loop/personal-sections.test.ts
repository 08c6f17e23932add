import type { Note, PromptContextSnapshot, Todo } from "@moniro/ports";
import { describe, expect, it } from "vitest";
import { estimateTokens, MAX_LINE_CHARS, personalSections } from "./personal-sections.js";
import { buildSystemPrompt, MESSAGING_CONTRACT, soulText } from "./prompt.js";

const todo = (id: string, text: string): Todo => ({ id, text, done: false, createdAt: `2026-11-26T09:00:0${id}.000Z` });
const note = (n: number, text: string): Note => ({
  id: `${n}-0`,
  at: `2026-11-2${n}T10:00:00.000Z`,
  text,
  context: "personal",
});
const snapshot = (parts: Partial<PromptContextSnapshot>): PromptContextSnapshot => ({
  memory: [],
  todos: [],
  notes: [],
  ...parts,
});

describe("personal sections within the token budget", () => {
  it("shows everything that fits, in order, without pointers", () => {
    const sections = personalSections(
      snapshot({
        memory: [
          { key: "auth-pattern", value: "JWT with refresh tokens" },
          { key: "style", value: "explicit errors" },
        ],
        todos: [todo("1", "Review PR #456")],
        notes: [note(4, "first review done"), note(5, "auth learned")],
      }),
      1200,
      5,
    );
    expect(sections).toEqual({
      memory: "- auth-pattern: JWT with refresh tokens\n- style: explicit errors",
      todos: "- 1: Review PR #456",
      notes: "- [2026-11-24] first review done\n- [2026-11-25] auth learned",
    });
  });

  it("keeps the three sections within the budget and says what was left out and which tool reaches it", () => {
    const memory = Array.from({ length: 200 }, (_, i) => ({
      key: `fact-${String(i).padStart(3, "0")}`,
      value: "x".repeat(60),
    }));
    const todos = Array.from({ length: 50 }, (_, i) => todo(String(i + 1), `task ${i + 1} ${"y".repeat(40)}`));
    const notes = Array.from({ length: 5 }, (_, i) => note(i + 1, `note ${i + 1} ${"z".repeat(200)}`));
    const budget = 600;
    const sections = personalSections(snapshot({ memory, todos, notes }), budget, 5);
    const withoutPointers = (text: string) =>
      text
        .split("\n")
        .filter((line) => !line.startsWith("("))
        .join("\n");
    const spent =
      estimateTokens(withoutPointers(sections.memory)) +
      estimateTokens(withoutPointers(sections.todos)) +
      estimateTokens(withoutPointers(sections.notes));
    expect(spent).toBeLessThanOrEqual(budget);
    expect(sections.memory.split("\n")[0]).toBe(`- fact-000: ${"x".repeat(60)}`);
    expect(sections.memory).toMatch(/\((\d+) more not shown here: memory_search or memory_get finds them\.\)$/);
    const shownMemory = sections.memory.split("\n").filter((line) => line.startsWith("- ")).length;
    expect(sections.memory).toContain(`(${200 - shownMemory} more not shown here`);
    expect(sections.todos).toMatch(/more open: todo_list shows them all\.\)$/);
    // The newest notes win; they are shown oldest first.
    const shownNotes = sections.notes.split("\n").filter((line) => line.startsWith("- "));
    expect(shownNotes.at(-1)).toContain("note 5");
    expect(sections.notes).toMatch(/\(Older notes: note_read\.\)$/);
  });

  it("gives a section's unused share to the others", () => {
    const memory = Array.from({ length: 40 }, (_, i) => ({ key: `k${i}`, value: "v".repeat(30) }));
    const alone = personalSections(snapshot({ memory }), 400, 5);
    // Memory's share alone is 200 tokens; with no todos or notes it may use all 400.
    expect(estimateTokens(alone.memory)).toBeGreaterThan(250);
  });

  it("cuts a long line and says memory_get has the whole text; a zero budget leaves only pointers", () => {
    const long = personalSections(snapshot({ memory: [{ key: "essay", value: "w".repeat(2_000) }] }), 1200, 5);
    expect(long.memory.split("\n")[0]).toHaveLength(MAX_LINE_CHARS);
    expect(long.memory).toContain("memory_get <key> gives the whole text");
    const none = personalSections(
      snapshot({ memory: [{ key: "a", value: "b" }], todos: [todo("1", "t")], notes: [note(1, "n")] }),
      0,
      5,
    );
    expect(none).toEqual({
      memory: "(1 more not shown here: memory_search or memory_get finds them.)",
      todos: "(1 more open: todo_list shows them all.)",
      notes: "(Your notes do not fit here: note_read shows them.)",
    });
  });
});

describe("system prompt order (seed 004)", () => {
  it("base, soul, memory, todos, notes, workflow append, then the messaging contract", () => {
    const prompt = buildSystemPrompt({
      base: "You are Alice.",
      soul: { role: "code-reviewer", expertise: ["typescript", "testing"], principles: ["Explain the why"] },
      memory: "- auth: JWT",
      todos: "- 1: Review PR",
      notes: "- [2026-11-25] learned X",
      workflowAppend: "In this workflow you review PR #123.",
    });
    const order = [
      "You are Alice.",
      "## Soul\nRole: code-reviewer\nExpertise: typescript, testing\nPrinciples:\n- Explain the why",
      "## Memory (yours, from memory_write)\n- auth: JWT",
      "## Active todos\n- 1: Review PR",
      "## Recent notes\n- [2026-11-25] learned X",
      "In this workflow you review PR #123.",
      MESSAGING_CONTRACT,
    ];
    expect(prompt).toBe(order.join("\n\n"));
  });

  it("free-text soul and structured soul together; empty parts leave no heading", () => {
    expect(soulText({ text: "Curious.", style: "terse" })).toBe("Curious.\nStyle: terse");
    expect(buildSystemPrompt({ base: "Hi.", memory: "", todos: " " })).toBe(`Hi.\n\n${MESSAGING_CONTRACT}`);
  });
});
