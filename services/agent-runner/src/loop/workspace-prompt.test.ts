import { textReply } from "@moniro/ports/test";
import { StoreWorkspaceContext } from "@moniro/store";
import { InMemoryWorkspaceStore } from "@moniro/store/test";
import { describe, expect, it } from "vitest";
import { harness } from "./test-harness.js";

const TEAM_TOOL = { name: "channel_send", description: "post", inputSchema: { type: "object" } };
const BASE_TOOLS = [
  { name: "message", description: "send", inputSchema: { type: "object" } },
  { name: "skip", description: "skip", inputSchema: { type: "object" } },
];

async function setup(threads: "unified" | "per-context" = "unified") {
  const store = new InMemoryWorkspaceStore();
  const review = store.instance("review", "main");
  await review.start([
    { name: "ada", agent: "ada", kind: "ref", role: "reviewer", promptAppend: "Focus on security." },
    { name: "bob", agent: "bob", kind: "ref", role: "author" },
  ]);
  const h = await harness({
    llm: [textReply("one"), textReply("two"), textReply("three")],
    settings: { threads, tools: [...BASE_TOOLS, TEAM_TOOL], workspaceTools: ["channel_send"] },
  });
  h.deps.workspace = new StoreWorkspaceContext(store);
  return { h, review, store };
}

const fromWorkspace = { source: "ws:review:main", context: "review:main", replyTo: "ws:review:main" } as const;

describe("workspace context in the system prompt", () => {
  it("shows unseen channel posts, unread mentions, documents and the member's prompt.append; the next cycle shows only what is new", async () => {
    const { h, review } = await setup();
    await review.channel.post({ from: "bob", text: "pushed the fix to branch fix-42" });
    await review.channel.post({ from: "bob", text: "@ada please check line 42" });
    await review.documents.write("plan.md", "# plan", { by: "bob" });

    await h.send("bob: @ada please check line 42", { ...fromWorkspace, priority: "immediate" });
    await h.run();
    const first = h.llm.requests[0]?.system ?? "";
    expect(first).toContain("## Workspace review:main");
    expect(first).toContain("Here you are ada (reviewer); the other members are bob (author).");
    expect(first).toMatch(
      /### Channel since you last looked\n- \[\d+-\d+\] bob: pushed the fix to branch fix-42\n- \[\d+-\d+\] bob: @ada please check line 42/,
    );
    expect(first).toMatch(/### Unread @mentions of you \(1\)\n- \[\d+-\d+\] bob: @ada please check line 42/);
    expect(first).toContain("### Shared documents\n- plan.md (v1, 6 bytes, by bob)");
    expect(first).toContain("Focus on security.");
    expect(h.llm.requests[0]?.tools.map((tool) => tool.name)).toContain("channel_send");

    // A post without a mention wakes nobody; ada sees it the next time she works in this workspace.
    await review.channel.post({ from: "bob", text: "also renamed the config file" });
    await h.send("anything new?", fromWorkspace);
    await h.run();
    const second = h.llm.requests[1]?.system ?? "";
    expect(second).toMatch(/### Channel since you last looked\n- \[\d+-\d+\] bob: also renamed the config file\n\n/);
    expect(second).not.toContain("pushed the fix");
  });

  it("a personal cycle has no workspace sections, no prompt.append of the workflow and no team tools", async () => {
    const { h, review } = await setup();
    await review.channel.post({ from: "bob", text: "hello team" });
    await h.send("hi", { source: "http:carol" });
    await h.run();
    const request = h.llm.requests[0];
    expect(request?.system).not.toContain("## Workspace");
    expect(request?.system).not.toContain("Focus on security.");
    expect(request?.tools.map((tool) => tool.name)).toEqual(["message", "skip"]);
    // The post stays unseen for the next workspace cycle.
    await h.send("go on", fromWorkspace);
    await h.run();
    expect(h.llm.requests[1]?.system).toContain("bob: hello team");
  });

  it("with threads: per-context the work runs in the review:main thread", async () => {
    const { h } = await setup("per-context");
    await h.send("task", fromWorkspace);
    await h.run();
    expect(h.kinds("review:main")).toEqual(["input", "assistant"]);
    expect(h.kinds("personal")).toEqual([]);
  });

  it("an instance stopped since the input was queued: personal context only, no team tools, and the prompt says why", async () => {
    const { h, review } = await setup();
    await review.stop();
    await h.send("task", fromWorkspace);
    await h.run();
    const request = h.llm.requests[0];
    expect(request?.system).toContain(
      "This input names workspace review:main, which is not running: it is handled with your personal context only",
    );
    expect(request?.tools.map((tool) => tool.name)).toEqual(["message", "skip"]);
  });

  it("many unseen posts: the newest fit the budget and a line says channel_read reaches the rest", async () => {
    const { h, review } = await setup();
    for (let i = 0; i < 30; i++) await review.channel.post({ from: "bob", text: `update number ${i}` });
    h.settings.workspace.channel = 20;
    await h.send("catch up", fromWorkspace);
    await h.run();
    const system = h.llm.requests[0]?.system ?? "";
    expect(system).toContain("(Earlier unseen posts are not shown: channel_read reads them.)");
    expect(system).toContain("bob: update number 29");
    expect(system).not.toContain("bob: update number 9\n");
  });
});
