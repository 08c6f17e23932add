import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import type { LlmRequest } from "@moniro/ports";
import { LlmError } from "@moniro/ports";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  errorReply,
  type FakeAnthropic,
  startFakeAnthropic,
  streamErrorReply,
  textReply,
  toolUseReply,
} from "../test/index.js";
import { createAnthropicProvider } from "./provider.js";

// The real @anthropic-ai/sdk, through the adapter, against the local fake server.

const request: LlmRequest = {
  model: "claude-test",
  system: "You are a test agent.",
  messages: [{ role: "user", content: [{ type: "text", text: "[http:bob] hello" }] }],
  tools: [
    {
      name: "ls",
      description: "List a directory",
      inputSchema: { type: "object", properties: { path: { type: "string" } } },
    },
    {
      name: "message",
      description: "Send a message",
      inputSchema: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
    },
  ],
  maxTokens: 1024,
};

let fake: FakeAnthropic;
beforeEach(async () => {
  fake = await startFakeAnthropic({ apiKey: "test-key" });
});
afterEach(async () => {
  await fake.close();
});

function provider(options: { timeoutMs?: number; promptCaching?: boolean } = {}) {
  return createAnthropicProvider({ apiKey: "test-key", baseURL: fake.url, ...options });
}

async function rejection(promise: Promise<unknown>): Promise<LlmError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(LlmError);
  return error as LlmError;
}

describe("anthropic provider: streaming", () => {
  it("streams text, forwarding every delta, and returns the whole text with end_turn", async () => {
    const text = "I have looked at the workspace: two files, « naïve » notes 🎉 and 日本語 text.";
    fake.enqueue(textReply(text));
    const deltas: string[] = [];
    const response = await provider().stream(request, { onTextDelta: (delta) => deltas.push(delta) });
    expect(response.text).toBe(text);
    expect(deltas.length).toBeGreaterThan(1);
    expect(deltas.join("")).toBe(text);
    expect(response.toolUses).toEqual([]);
    expect(response.stopReason).toBe("end_turn");
  });

  it("assembles a tool_use input from its input_json_delta fragments", async () => {
    const input = { path: "src/deep/dir", options: { all: true, depth: 3 }, names: ["a", "b"] };
    fake.enqueue(toolUseReply([{ name: "ls", input, id: "toolu_abc" }], { text: "Let me look." }));
    const response = await provider().stream(request);
    expect(response.text).toBe("Let me look.");
    expect(response.toolUses).toEqual([{ id: "toolu_abc", name: "ls", input }]);
    expect(response.stopReason).toBe("tool_use");
  });

  it("returns several tool calls in order", async () => {
    fake.enqueue(
      toolUseReply([
        { name: "ls", input: { path: "." } },
        { name: "message", input: { text: "hi" } },
      ]),
    );
    const response = await provider().stream(request);
    expect(response.toolUses.map((use) => use.name)).toEqual(["ls", "message"]);
    expect(response.toolUses[1]?.input).toEqual({ text: "hi" });
    expect(response.text).toBe("");
  });

  it("maps usage, including the cache read and creation tokens", async () => {
    fake.enqueue(
      textReply("ok", {
        usage: { input_tokens: 21, output_tokens: 7, cache_creation_input_tokens: 1500, cache_read_input_tokens: 300 },
      }),
    );
    const response = await provider().stream(request);
    expect(response.usage).toEqual({
      inputTokens: 21,
      outputTokens: 7,
      cacheCreationInputTokens: 1500,
      cacheReadInputTokens: 300,
    });
  });

  it("puts cache_control on the last tool, the system prompt and the last message block; a repeat reads the cache", async () => {
    fake.enqueue(textReply("one"), textReply("two"));
    const llm = provider();
    // Above the API's minimum cacheable prefix (1,024 tokens).
    const cached = { ...request, system: `${request.system} ${"Be brief. ".repeat(500)}` };
    const first = await llm.stream(cached);
    const second = await llm.stream(cached);
    const body = fake.requests[0]?.body;
    expect(body?.tools?.map((tool) => tool.cache_control)).toEqual([undefined, { type: "ephemeral" }]);
    expect(body?.system).toEqual([{ type: "text", text: cached.system, cache_control: { type: "ephemeral" } }]);
    const lastBlock = body?.messages.at(-1)?.content.at(-1);
    expect(lastBlock).toMatchObject({ type: "text", cache_control: { type: "ephemeral" } });
    expect(first.usage.cacheCreationInputTokens).toBeGreaterThan(0);
    expect(first.usage.cacheReadInputTokens).toBe(0);
    expect(second.usage.cacheReadInputTokens).toBe(first.usage.cacheCreationInputTokens);
    expect(second.usage.cacheCreationInputTokens).toBe(0);
  });

  it("the next step of a cycle and the next cycle read the prompt so far from the cache (four breakpoints)", async () => {
    fake.enqueue(textReply("one"), textReply("two"), textReply("three"));
    const llm = provider();
    const system = `${request.system} ${"Be brief. ".repeat(500)}`;
    const input = { type: "text" as const, text: "[http:bob] hello" };
    const use = { type: "tool_use" as const, id: "toolu_1", name: "message", input: { text: "hi", final: true } };
    const result = { type: "tool_result" as const, tool_use_id: "toolu_1", content: "sent" };
    const first = await llm.stream({ ...request, system });
    const cycle = [
      { role: "user" as const, content: [input] },
      { role: "assistant" as const, content: [use] },
      { role: "user" as const, content: [result] },
    ];
    // The second step: the prompt so far is read, only the new blocks are written.
    const second = await llm.stream({ ...request, system, messages: cycle });
    // The next cycle, after a final message: the new input follows the last result.
    const next = [
      ...cycle.slice(0, 2),
      { role: "user" as const, content: [result, { ...input, text: "[http:bob] again" }] },
    ];
    const third = await llm.stream({ ...request, system, messages: next });

    // What one call wrote, the next reads; each call writes only the blocks it added.
    expect(second.usage.cacheReadInputTokens).toBe(first.usage.cacheCreationInputTokens);
    expect(second.usage.cacheCreationInputTokens).toBeLessThan(60);
    expect(third.usage.cacheReadInputTokens).toBe(
      (second.usage.cacheReadInputTokens ?? 0) + (second.usage.cacheCreationInputTokens ?? 0),
    );
    expect(third.usage.cacheCreationInputTokens).toBeLessThan(60);
    const marks = (fake.requests[2]?.rawBody.match(/"cache_control"/g) ?? []).length;
    expect(marks).toBe(4);
    // The breakpoint before the last assistant message sits where the previous call's prompt ended.
    expect(fake.requests[2]?.body.messages[0]?.content.at(-1)).toMatchObject({ cache_control: { type: "ephemeral" } });
  });

  it("sends no cache_control when prompt caching is off", async () => {
    fake.enqueue(textReply("ok"));
    await provider({ promptCaching: false }).stream(request);
    expect(fake.requests[0]?.rawBody).not.toContain("cache_control");
  });

  it("sends tool results after the tool_use they answer, with text after them", async () => {
    fake.enqueue(textReply("done"));
    await provider().stream({
      ...request,
      messages: [
        ...request.messages,
        {
          role: "assistant",
          content: [
            { type: "text", text: "" },
            { type: "tool_use", id: "toolu_1", name: "ls", input: { path: "." } },
          ],
        },
        {
          role: "user",
          content: [
            { type: "tool_result", tool_use_id: "toolu_1", content: "no such dir", is_error: true },
            { type: "text", text: "[http:bob] and another thing" },
          ],
        },
      ],
    });
    const messages = fake.requests[0]?.body.messages;
    // The blank monologue block is left out: the API refuses blank text.
    expect(messages?.[1]?.content).toEqual([{ type: "tool_use", id: "toolu_1", name: "ls", input: { path: "." } }]);
    expect(messages?.[2]?.content).toEqual([
      { type: "tool_result", tool_use_id: "toolu_1", content: "no such dir", is_error: true },
      { type: "text", text: "[http:bob] and another thing", cache_control: { type: "ephemeral" } },
    ]);
  });

  it("records the request: model, max_tokens, stream, system, tools, messages, headers and receivedAt", async () => {
    fake.enqueue(textReply("ok"));
    const before = Date.now();
    await provider().stream(request);
    const [recorded] = await fake.waitForRequests(1);
    expect(recorded?.body).toMatchObject({
      model: "claude-test",
      max_tokens: 1024,
      stream: true,
      messages: [{ role: "user", content: [{ type: "text", text: "[http:bob] hello" }] }],
    });
    expect(recorded?.body.tools?.map((tool) => tool.name)).toEqual(["ls", "message"]);
    expect(recorded?.body.tools?.[1]?.input_schema).toEqual(request.tools[1]?.inputSchema);
    expect(recorded?.headers.authorization).toBe("Bearer test-key");
    expect(recorded?.headers["anthropic-version"]).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    expect(recorded?.receivedAt).toBeGreaterThanOrEqual(before);
    expect(recorded?.receivedAt).toBeLessThanOrEqual(Date.now());
  });
});

describe("anthropic provider: errors carry the DESIGN §5 verdict", () => {
  it("429 with retry-after → transient with retryAfterMs", async () => {
    fake.enqueue(
      errorReply(429, "rate_limit_error", "Number of requests has exceeded your rate limit", { retryAfter: 7 }),
    );
    const error = await rejection(provider().stream(request));
    expect(error.errorClass).toBe("transient");
    expect(error.isRetryable).toBe(true);
    expect(error.status).toBe(429);
    expect(error.retryAfterMs).toBe(7000);
    expect(error.code).toBe("rate_limit_error");
    expect(error.message).toContain("rate limit");
  });

  it("529 overloaded → transient, without a retry hint when the server gave none", async () => {
    fake.enqueue(errorReply(529, "overloaded_error", "Overloaded"));
    const error = await rejection(provider().stream(request));
    expect(error.errorClass).toBe("transient");
    expect(error.status).toBe(529);
    expect(error.retryAfterMs).toBeUndefined();
  });

  it("500 → transient", async () => {
    fake.enqueue(errorReply(500, "api_error", "Internal server error"));
    expect((await rejection(provider().stream(request))).errorClass).toBe("transient");
  });

  it("the SDK does not retry by itself: one request per call", async () => {
    fake.enqueue(errorReply(529, "overloaded_error", "Overloaded"), textReply("would be the retry"));
    await rejection(provider().stream(request));
    expect(fake.requests).toHaveLength(1);
    expect(fake.remaining()).toBe(1);
  });

  it("401 → permanent, pointing at ANTHROPIC_API_KEY", async () => {
    const error = await rejection(createAnthropicProvider({ apiKey: "wrong-key", baseURL: fake.url }).stream(request));
    expect(error.errorClass).toBe("permanent");
    expect(error.status).toBe(401);
    expect(error.message).toContain("ANTHROPIC_API_KEY");
  });

  it("400, 403 and 404 → permanent", async () => {
    fake.enqueue(
      errorReply(400, "invalid_request_error", "tools.0.name: String should match pattern"),
      errorReply(403, "permission_error", "Your API key does not have permission"),
      errorReply(404, "not_found_error", "model: claude-nope"),
    );
    for (const status of [400, 403, 404]) {
      const error = await rejection(provider().stream(request));
      expect(error.errorClass).toBe("permanent");
      expect(error.status).toBe(status);
    }
  });

  it("400 prompt too long → resource (context overflow)", async () => {
    fake.enqueue(errorReply(400, "invalid_request_error", "prompt is too long: 208310 tokens > 200000 maximum"));
    const error = await rejection(provider().stream(request));
    expect(error.errorClass).toBe("resource");
    expect(error.code).toBe("context_overflow");
    expect(error.status).toBe(400);
  });

  it("an overloaded error in the middle of the stream → transient", async () => {
    fake.enqueue(streamErrorReply("overloaded_error", "Overloaded", { text: "Let me" }));
    const deltas: string[] = [];
    const error = await rejection(provider().stream(request, { onTextDelta: (delta) => deltas.push(delta) }));
    expect(error.errorClass).toBe("transient");
    expect(error.status).toBeUndefined();
    expect(deltas.join("")).toBe("Let me");
  });

  it("a server that cannot be reached → transient connection error", async () => {
    const url = fake.url;
    await fake.close();
    const error = await rejection(createAnthropicProvider({ apiKey: "test-key", baseURL: url }).stream(request));
    expect(error.errorClass).toBe("transient");
    expect(error.code).toBe("connection");
    fake = await startFakeAnthropic();
  });

  it("a redirect is not followed: the call fails as a transient connection error, and the target gets nothing", async () => {
    const redirector = createServer((_request, response) => {
      response.writeHead(307, { location: `${fake.url}/v1/messages` }).end();
    });
    await new Promise<void>((resolve) => redirector.listen(0, "127.0.0.1", resolve));
    const { port } = redirector.address() as AddressInfo;
    try {
      const error = await rejection(
        createAnthropicProvider({ apiKey: "test-key", baseURL: `http://127.0.0.1:${port}` }).stream(request),
      );
      expect(error.errorClass).toBe("transient");
      expect(error.code).toBe("connection");
      expect(fake.requests).toHaveLength(0);
    } finally {
      await new Promise((resolve) => redirector.close(resolve));
    }
  });

  it("a stream that keeps sending events may last longer than timeoutMs", async () => {
    // 14 events 50 ms apart: the whole stream takes longer than the 400 ms timeout.
    const text = Array.from({ length: 24 }, (_, index) => `word${index}`).join(" ");
    fake.enqueue(textReply(text, { chunkDelayMs: 50 }));
    const response = await provider({ timeoutMs: 400 }).stream(request);
    expect(response.text).toBe(text);
  });

  it("a stream that goes silent longer than timeoutMs → transient timeout", async () => {
    fake.enqueue(textReply("one two three four five six seven", { chunkDelayMs: 60_000 }));
    const error = await rejection(provider({ timeoutMs: 200 }).stream(request));
    expect(error.errorClass).toBe("transient");
    expect(error.code).toBe("timeout");
  });
});

describe("anthropic provider: abort", () => {
  it("rejects with the abort reason as soon as the signal fires mid-stream", async () => {
    // After the first text delta the stream stalls for a minute: without a prompt abort the test would time out.
    fake.enqueue(
      textReply("first words arrive, then the rest takes a long time", { stall: { afterEvents: 4, ms: 60_000 } }),
    );
    const controller = new AbortController();
    const reason = new Error("interrupted by new input");
    let firstDelta: () => void = () => {};
    const deltaSeen = new Promise<void>((resolve) => {
      firstDelta = resolve;
    });
    const deltas: string[] = [];
    const pending = provider().stream(request, {
      signal: controller.signal,
      onTextDelta: (delta) => {
        deltas.push(delta);
        firstDelta();
      },
    });
    await deltaSeen;
    controller.abort(reason);
    await expect(pending).rejects.toBe(reason);
    expect(deltas).toEqual(["first words arrive, "]);
  });

  it("rejects with the abort reason while still waiting for the response headers", async () => {
    fake.enqueue(textReply("too late", { delayMs: 60_000 }));
    const controller = new AbortController();
    const pending = provider().stream(request, { signal: controller.signal });
    await fake.waitForRequests(1);
    controller.abort(new Error("canceled by the operator"));
    await expect(pending).rejects.toThrow("canceled by the operator");
  });

  it("rejects at once when the signal is already aborted, without a request", async () => {
    const controller = new AbortController();
    controller.abort(new Error("canceled"));
    await expect(provider().stream(request, { signal: controller.signal })).rejects.toThrow("canceled");
    expect(fake.requests).toHaveLength(0);
  });
});
