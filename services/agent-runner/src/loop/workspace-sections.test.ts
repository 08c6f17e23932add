import type { WorkspacePromptSnapshot } from "@moniro/ports";
import { describe, expect, it } from "vitest";
import { MAX_LINE_CHARS } from "./personal-sections.js";
import { workspaceSection } from "./workspace-sections.js";

const post = (n: number, text = `post ${n}`) => ({ id: `1-${n}`, from: "bob", text, at: n });

function snapshot(overrides: Partial<WorkspacePromptSnapshot> = {}): WorkspacePromptSnapshot {
  return {
    workflow: "review",
    tag: "pr1",
    member: { name: "alice", role: "reviewer" },
    members: [{ name: "bob" }],
    unseen: [],
    moreUnseen: false,
    mentions: [],
    unreadMentions: 0,
    documents: [],
    ...overrides,
  };
}

describe("workspaceSection", () => {
  it("flattens a long post to one line cut with …", () => {
    const text = `first line\nsecond ${"x".repeat(MAX_LINE_CHARS * 2)}`;
    const section = workspaceSection(snapshot({ unseen: [post(1, text)] }), 10_000);
    const line = section.split("\n").find((l) => l.startsWith("- [1-1]")) ?? "";
    expect(line).toContain("first line second x");
    expect(line.endsWith("…")).toBe(true);
    expect(line.length).toBeLessThan(MAX_LINE_CHARS + 20);
  });

  it("shows the oldest mentions that fit and counts the rest", () => {
    const mentions = Array.from({ length: 50 }, (_, i) => post(i, `@alice please look at item ${i}`));
    const section = workspaceSection(snapshot({ mentions, unreadMentions: 50 }), 200);
    expect(section).toContain("- [1-0] bob: @alice please look at item 0");
    expect(section).not.toContain("item 49");
    const shown = section.split("\n").filter((l) => l.startsWith("- [1-")).length;
    expect(section).toContain(`(${50 - shown} more: inbox lists them.)`);
  });

  it("shows the newest channel posts that fit and says earlier ones are not shown", () => {
    const unseen = Array.from({ length: 50 }, (_, i) => post(i, `channel message number ${i}`));
    const section = workspaceSection(snapshot({ unseen }), 200);
    expect(section).toContain("channel message number 49");
    expect(section).not.toContain("channel message number 0\n");
    expect(section).toContain("(Earlier unseen posts are not shown: channel_read reads them.)");
  });
});
