import type { LlmContentBlock, LlmMessage, LlmRequest, LlmResponse } from "@moniro/ports";
import { describe, expect, it } from "vitest";
import { inputsOf, listedNames } from "./conversation.js";
import { createMockProvider } from "./mock-provider.js";

const TOOLS = ["ls", "message", "read"].map((name) => ({
  name,
  description: name,
  inputSchema: { type: "object" },
}));

function requestOf(messages: LlmMessage[], tools = TOOLS): LlmRequest {
  return { model: "mock", system: "You are alice.", messages, tools, maxTokens: 1000 };
}

const user = (...content: LlmContentBlock[]): LlmMessage => ({ role: "user", content });
const text = (value: string): LlmContentBlock => ({ type: "text", text: value });

/** The assistant turn the runner writes back from a response. */
function assistantOf(response: LlmResponse): LlmMessage {
  return {
    role: "assistant",
    content: [
      ...(response.text ? [text(response.text)] : []),
      ...response.toolUses.map((use) => ({ type: "tool_use" as const, ...use })),
    ],
  };
}

function resultFor(response: LlmResponse, content: string, isError = false): LlmContentBlock {
  const use = response.toolUses[0];
  if (!use) throw new Error("expected a tool call");
  return { type: "tool_result", tool_use_id: use.id, content, ...(isError ? { is_error: true } : {}) };
}

describe("mock provider", () => {
  it("lists the workspace, answers with a final message what it was told and saw; asked again, ends its turn", async () => {
    const llm = createMockProvider({ agentName: "alice" });
    const messages: LlmMessage[] = [user(text("[http:bob] How are you?"))];
    const deltas: string[] = [];
    const first = await llm.stream(requestOf(messages), { onTextDelta: (delta) => deltas.push(delta) });
    expect(first.toolUses).toEqual([{ id: expect.stringMatching(/^toolu_mock_/), name: "ls", input: { path: "." } }]);
    expect(first.stopReason).toBe("tool_use");
    expect(first.text.length).toBeGreaterThan(0);
    expect(deltas.join("")).toBe(first.text);

    messages.push(assistantOf(first), user(resultFor(first, "a.txt\t12\nb.md\t40\nnotes/")));
    const second = await llm.stream(requestOf(messages));
    expect(second.toolUses).toHaveLength(1);
    expect(second.toolUses[0]?.name).toBe("message");
    expect(second.toolUses[0]?.input).toEqual({
      text: `Hello! I'm alice. You said: "How are you?". My workspace has: a.txt, b.md, notes/.`,
      final: true,
    });

    messages.push(assistantOf(second), user(resultFor(second, "sent")));
    const third = await llm.stream(requestOf(messages));
    expect(third.toolUses).toEqual([]);
    expect(third.stopReason).toBe("end_turn");
    expect(third.text.length).toBeGreaterThan(0);
    expect(third.usage.inputTokens).toBeGreaterThan(first.usage.inputTokens);
  });

  it("answers an input injected after the ls result together with the first one (same sender: one message)", async () => {
    const llm = createMockProvider({ agentName: "alice" });
    const messages: LlmMessage[] = [user(text("[http:bob] first question"))];
    const first = await llm.stream(requestOf(messages));
    messages.push(assistantOf(first), user(resultFor(first, "(empty directory)"), text("[http:bob] second one")));
    const second = await llm.stream(requestOf(messages));
    expect(second.toolUses.map((use) => use.input)).toEqual([
      { text: `Hello! I'm alice. You said: "first question" and "second one". My workspace is empty.`, final: true },
    ]);
  });

  it("with inputs from several senders, sends one message to each", async () => {
    const llm = createMockProvider({ agentName: "alice" });
    const messages: LlmMessage[] = [user(text("[http:bob] hi"))];
    const first = await llm.stream(requestOf(messages));
    messages.push(assistantOf(first), user(resultFor(first, "a.txt\t1"), text("[signal:+15551234567] hello")));
    const second = await llm.stream(requestOf(messages));
    expect(second.toolUses.map((use) => use.input)).toEqual([
      { to: "http:bob", text: `Hello! I'm alice. You said: "hi". My workspace has: a.txt.` },
      { to: "signal:+15551234567", text: `Hello! I'm alice. You said: "hello". My workspace has: a.txt.`, final: true },
    ]);
    messages.push(assistantOf(second), {
      role: "user",
      content: second.toolUses.map((use) => ({ type: "tool_result" as const, tool_use_id: use.id, content: "sent" })),
    });
    expect((await llm.stream(requestOf(messages))).stopReason).toBe("end_turn");
  });

  it("reads several inputs from one block (queue modes steer and collect), attachments included", () => {
    expect(inputsOf("INBOX (2 messages):\n[http:bob] one\n(attachment: a.png, image/png)\n[http:bob] two")).toEqual([
      { source: "http:bob", text: "one\n(attachment: a.png, image/png)" },
      { source: "http:bob", text: "two" },
    ]);
    expect(inputsOf("plain text")).toEqual([{ source: undefined, text: "plain text" }]);
  });

  it("handles an input that arrives after it has spoken: lists again and answers only the new one", async () => {
    const llm = createMockProvider({ agentName: "alice" });
    const messages: LlmMessage[] = [user(text("[http:bob] one"))];
    const ls = await llm.stream(requestOf(messages));
    messages.push(assistantOf(ls), user(resultFor(ls, "a.txt\t1")));
    const spoke = await llm.stream(requestOf(messages));
    messages.push(assistantOf(spoke), user(resultFor(spoke, "sent"), text("[http:bob] two")));
    const again = await llm.stream(requestOf(messages));
    expect(again.toolUses[0]?.name).toBe("ls");
    messages.push(assistantOf(again), user(resultFor(again, "a.txt\t1\nb.txt\t2")));
    const answer = await llm.stream(requestOf(messages));
    expect(answer.toolUses[0]?.input).toEqual({
      text: `Hello! I'm alice. You said: "two". My workspace has: a.txt, b.txt.`,
      final: true,
    });
  });

  it("never loops: with nothing new it ends the turn, however often it is asked", async () => {
    const llm = createMockProvider();
    const messages: LlmMessage[] = [user(text("[http:bob] hi"))];
    const calls: string[] = [];
    for (let step = 0; step < 6; step++) {
      const response = await llm.stream(requestOf(messages));
      const use = response.toolUses[0];
      calls.push(use?.name ?? "end");
      if (!use) break;
      messages.push(assistantOf(response), user(resultFor(response, use.name === "ls" ? "x.txt\t3" : "sent")));
    }
    expect(calls).toEqual(["ls", "message", "end"]);
  });

  it("reports an ls error and a failed message instead of retrying them", async () => {
    const llm = createMockProvider({ agentName: "alice", workspaceHint: "ws-1" });
    const messages: LlmMessage[] = [user(text("[http:bob] hi"))];
    const ls = await llm.stream(requestOf(messages));
    messages.push(assistantOf(ls), user(resultFor(ls, "'.' does not exist.", true)));
    const spoke = await llm.stream(requestOf(messages));
    expect(spoke.toolUses[0]?.input).toEqual({
      text: `Hello! I'm alice. You said: "hi". I could not list my workspace (ws-1): '.' does not exist.`,
      final: true,
    });
    messages.push(assistantOf(spoke), user(resultFor(spoke, "No 'to' given", true)));
    const end = await llm.stream(requestOf(messages));
    expect(end.toolUses).toEqual([]);
    expect(end.text).toContain("could not be sent");
  });

  it("skips tools the agent does not have", async () => {
    const llm = createMockProvider();
    const onlyMessage = TOOLS.filter((tool) => tool.name === "message");
    const response = await llm.stream(requestOf([user(text("[http:bob] hi"))], onlyMessage));
    expect(response.toolUses[0]?.name).toBe("message");
    const silent = await llm.stream(requestOf([user(text("[http:bob] hi"))], []));
    expect(silent.toolUses).toEqual([]);
    expect(silent.text).toContain("no 'message' tool");
  });

  it("answers a heartbeat with HEARTBEAT_OK and ignores runtime notes", async () => {
    const llm = createMockProvider();
    const response = await llm.stream(
      requestOf([user(text("[moniro] Summary of the earlier part"), text("[cron:heartbeat] health check"))]),
    );
    expect(response.toolUses[0]).toMatchObject({ name: "message", input: { text: "HEARTBEAT_OK", final: true } });
  });

  it("rejects with the abort reason while a slow step is under way", async () => {
    const llm = createMockProvider({ stepDelayMs: 60_000 });
    const controller = new AbortController();
    const pending = llm.stream(requestOf([user(text("[http:bob] hi"))]), { signal: controller.signal });
    const reason = new Error("interrupted");
    controller.abort(reason);
    await expect(pending).rejects.toBe(reason);
  });

  it("reads names from the ls tool's text", () => {
    expect(listedNames("a.txt\t12\nlink ->\t4\nsub/\n[… 3 more entries]")).toEqual(["a.txt", "link", "sub/"]);
    expect(listedNames("(empty directory)")).toEqual([]);
  });
});
