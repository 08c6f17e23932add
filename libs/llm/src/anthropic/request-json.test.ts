import type { LlmContentBlock, LlmRequest, LlmToolSpec } from "@moniro/ports";
import { describe, expect, it } from "vitest";
import { toAnthropicParams } from "./request.js";
import { RequestJsonEncoder } from "./request-json.js";

const tools: LlmToolSpec[] = [
  {
    name: "message",
    description: "Send a message",
    inputSchema: { type: "object", properties: { text: { type: "string" } } },
  },
  { name: "skip", description: "Skip", inputSchema: { type: "object", properties: {} } },
];

function request(overrides: Partial<LlmRequest> = {}): LlmRequest {
  const use: LlmContentBlock = { type: "tool_use", id: "tu_1", name: "message", input: { text: 'a "quoted"\n line' } };
  return {
    model: "claude-test",
    system: "You are an agent.",
    maxTokens: 1024,
    tools,
    messages: [
      { role: "user", content: [{ type: "text", text: "[http:boss] hello ✓" }] },
      { role: "assistant", content: [{ type: "text", text: "on it" }, use] },
      {
        role: "user",
        content: [
          { type: "tool_result", tool_use_id: "tu_1", content: "ok" },
          { type: "text", text: "  " },
          { type: "text", text: "[http:boss] again" },
        ],
      },
      { role: "assistant", content: [{ type: "tool_use", id: "tu_2", name: "skip", input: {} }] },
      { role: "user", content: [{ type: "tool_result", tool_use_id: "tu_2", content: "boom", is_error: true }] },
    ],
    ...overrides,
  };
}

const sdkJson = (req: LlmRequest, promptCaching: boolean) => JSON.stringify(toAnthropicParams(req, { promptCaching }));
/** The body as the server receives it: its bytes read as UTF-8 (a wrong byte or a character cut in two shows). */
const text = (body: Uint8Array) => new TextDecoder("utf-8", { fatal: true }).decode(body);

describe("RequestJsonEncoder", () => {
  it("sends byte for byte what the SDK's encoding of the params gives, with and without prompt caching", () => {
    const encoder = new RequestJsonEncoder();
    for (const promptCaching of [true, false]) {
      expect(text(encoder.encode(request(), { promptCaching }))).toBe(sdkJson(request(), promptCaching));
    }
  });

  it("stays identical when the same blocks move: a block that carried a breakpoint last call does not carry it now", () => {
    const encoder = new RequestJsonEncoder();
    const first = request();
    encoder.encode(first, { promptCaching: true });
    const next: LlmRequest = {
      ...first,
      messages: [
        ...first.messages,
        { role: "assistant", content: [{ type: "text", text: "done" }] },
        { role: "user", content: [{ type: "text", text: "[http:boss] thanks" }] },
      ],
    };
    expect(text(encoder.encode(next, { promptCaching: true }))).toBe(sdkJson(next, true));
    expect(text(encoder.encode(first, { promptCaching: true }))).toBe(sdkJson(first, true));
  });

  it("covers the edge cases: no system prompt, no tools, a message of blank text only, one message", () => {
    const encoder = new RequestJsonEncoder();
    const cases: LlmRequest[] = [
      request({ system: "  ", tools: [] }),
      request({ messages: [{ role: "user", content: [{ type: "text", text: " " }] }] }),
      request({ messages: [{ role: "user", content: [{ type: "text", text: "hi" }] }] }),
      request({ messages: [] }),
      request({ tools: [] }),
      request({ system: "" }),
    ];
    for (const req of cases) {
      for (const promptCaching of [true, false])
        expect(text(encoder.encode(req, { promptCaching }))).toBe(sdkJson(req, promptCaching));
    }
  });
});
