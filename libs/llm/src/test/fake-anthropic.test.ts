import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type FakeAnthropic, startFakeAnthropic } from "./fake-anthropic.js";
import { errorReply, streamErrorReply, textReply, toolUseReply } from "./replies.js";

// The wire protocol of the fake, read with plain fetch (PROTOCOLS.md B).

let fake: FakeAnthropic;
beforeEach(async () => {
  fake = await startFakeAnthropic();
});
afterEach(async () => {
  await fake.close();
});

const HEADERS = { "x-api-key": "k", "anthropic-version": "2023-06-01", "content-type": "application/json" };
const BODY = { model: "claude-test", max_tokens: 100, messages: [{ role: "user", content: "hi" }] };

function post(body: unknown, headers: Record<string, string> = HEADERS, path = "/v1/messages") {
  return fetch(`${fake.url}${path}`, { method: "POST", headers, body: JSON.stringify(body) });
}

async function sse(response: Response): Promise<Array<{ event: string; data: Record<string, unknown> }>> {
  const text = await response.text();
  return text
    .split("\n\n")
    .filter((frame) => frame.trim().length > 0)
    .map((frame) => {
      const event = /^event: (.*)$/m.exec(frame)?.[1] ?? "";
      const data = JSON.parse(/^data: (.*)$/m.exec(frame)?.[1] ?? "null") as Record<string, unknown>;
      return { event, data };
    });
}

describe("fake Anthropic: streaming", () => {
  it("streams text then tool_use in the protocol's order, every frame named by its event", async () => {
    fake.enqueue(
      toolUseReply([{ name: "get_weather", input: { location: "Paris" }, id: "toolu_1" }], { text: "I'll check." }),
    );
    const response = await post({ ...BODY, stream: true });
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toMatch(/^text\/event-stream/);
    expect(response.headers.get("request-id")).toMatch(/^req_/);
    const events = await sse(response);
    expect(events.map((event) => event.event)).toEqual([
      "message_start",
      "content_block_start",
      "ping",
      "content_block_delta",
      "content_block_stop",
      "content_block_start",
      "content_block_delta",
      "content_block_delta",
      "content_block_delta",
      "content_block_delta",
      "content_block_stop",
      "message_delta",
      "message_stop",
    ]);
    for (const event of events) expect(event.data.type).toBe(event.event);
    const start = events[0]?.data.message as Record<string, unknown>;
    expect(start).toMatchObject({
      type: "message",
      role: "assistant",
      model: "claude-test",
      content: [],
      stop_reason: null,
    });
    expect(start.usage).toMatchObject({ input_tokens: expect.any(Number), output_tokens: 1 });
    expect(events[5]?.data.content_block).toEqual({ type: "tool_use", id: "toolu_1", name: "get_weather", input: {} });
    const fragments = events.slice(6, 10).map((event) => (event.data.delta as { partial_json: string }).partial_json);
    expect(fragments[0]).toBe("");
    expect(JSON.parse(fragments.join(""))).toEqual({ location: "Paris" });
    expect(events[11]?.data).toMatchObject({
      delta: { stop_reason: "tool_use", stop_sequence: null },
      usage: { output_tokens: expect.any(Number) },
    });
  });

  it("ends with event: error when the reply is a mid-stream error", async () => {
    fake.enqueue(streamErrorReply("overloaded_error", "Overloaded"));
    const events = await sse(await post({ ...BODY, stream: true }));
    expect(events.at(-1)).toEqual({
      event: "error",
      data: { type: "error", error: { type: "overloaded_error", message: "Overloaded" } },
    });
    expect(events.map((event) => event.event)).not.toContain("message_stop");
  });

  it("answers the non-streamed form with one JSON message", async () => {
    fake.enqueue(textReply("Hello there."));
    const response = await post(BODY);
    expect(response.headers.get("content-type")).toBe("application/json");
    expect(await response.json()).toMatchObject({
      type: "message",
      role: "assistant",
      model: "claude-test",
      content: [{ type: "text", text: "Hello there." }],
      stop_reason: "end_turn",
      stop_sequence: null,
      usage: { input_tokens: expect.any(Number), output_tokens: expect.any(Number) },
    });
  });

  it("answers count_tokens", async () => {
    const response = await post(BODY, HEADERS, "/v1/messages/count_tokens");
    expect(await response.json()).toEqual({ input_tokens: expect.any(Number) });
    expect(fake.requests).toHaveLength(0);
  });
});

describe("fake Anthropic: errors", () => {
  it("sends a scripted error with its status, body and retry-after", async () => {
    fake.enqueue(errorReply(429, "rate_limit_error", "slow down", { retryAfter: 3 }));
    const response = await post(BODY);
    expect(response.status).toBe(429);
    expect(response.headers.get("retry-after")).toBe("3");
    expect(await response.json()).toMatchObject({
      type: "error",
      error: { type: "rate_limit_error", message: "slow down" },
      request_id: expect.stringMatching(/^req_/),
    });
  });

  it("accepts the error object form of errorReply", () => {
    expect(errorReply(529, { type: "overloaded_error", message: "Overloaded" })).toEqual(
      errorReply(529, "overloaded_error", "Overloaded"),
    );
  });

  it("refuses a request without a key (401) or without anthropic-version (400)", async () => {
    const { "x-api-key": _key, ...noKey } = HEADERS;
    const unauthorized = await post(BODY, noKey);
    expect(unauthorized.status).toBe(401);
    expect(await unauthorized.json()).toMatchObject({ error: { type: "authentication_error" } });
    const { "anthropic-version": _version, ...noVersion } = HEADERS;
    const unversioned = await post(BODY, noVersion);
    expect(unversioned.status).toBe(400);
    expect(((await unversioned.json()) as { error: { message: string } }).error.message).toContain("anthropic-version");
  });

  it("checks the key when one is configured, accepting x-api-key or a Bearer token", async () => {
    const keyed = await startFakeAnthropic({ apiKey: "right", replies: [textReply("a"), textReply("b")] });
    try {
      const call = (headers: Record<string, string>) =>
        fetch(`${keyed.url}/v1/messages`, { method: "POST", headers, body: JSON.stringify(BODY) });
      expect((await call({ ...HEADERS, "x-api-key": "wrong" })).status).toBe(401);
      expect((await call({ ...HEADERS, "x-api-key": "right" })).status).toBe(200);
      const { "x-api-key": _key, ...bearer } = HEADERS;
      expect((await call({ ...bearer, authorization: "Bearer right" })).status).toBe(200);
    } finally {
      await keyed.close();
    }
  });

  it("says the script ran out, with a 500, when the queue is empty and there is no handler", async () => {
    const response = await post(BODY);
    expect(response.status).toBe(500);
    const body = (await response.json()) as { error: { type: string; message: string } };
    expect(body.error.type).toBe("api_error");
    expect(body.error.message).toMatch(/script ran out at request #1/);
  });

  it.each([
    ["a missing model", { max_tokens: 10, messages: BODY.messages }, /model/],
    ["no messages", { ...BODY, messages: [] }, /messages/],
    [
      "a tool_use without its tool_result",
      {
        ...BODY,
        messages: [
          { role: "user", content: "hi" },
          { role: "assistant", content: [{ type: "tool_use", id: "toolu_x", name: "ls", input: {} }] },
          { role: "user", content: [{ type: "text", text: "next" }] },
        ],
      },
      /toolu_x/,
    ],
    [
      "text before a tool_result",
      {
        ...BODY,
        messages: [
          { role: "user", content: "hi" },
          { role: "assistant", content: [{ type: "tool_use", id: "toolu_y", name: "ls", input: {} }] },
          {
            role: "user",
            content: [
              { type: "text", text: "early" },
              { type: "tool_result", tool_use_id: "toolu_y", content: "ok" },
            ],
          },
        ],
      },
      /must come first/,
    ],
    [
      "a blank text block",
      { ...BODY, messages: [{ role: "user", content: [{ type: "text", text: "  " }] }] },
      /non-whitespace/,
    ],
  ])("answers 400 invalid_request_error for %s, without using a scripted reply", async (_name, body, message) => {
    fake.enqueue(textReply("kept"));
    const response = await post(body);
    expect(response.status).toBe(400);
    const parsed = (await response.json()) as { error: { type: string; message: string } };
    expect(parsed.error.type).toBe("invalid_request_error");
    expect(parsed.error.message).toMatch(message);
    expect(fake.remaining()).toBe(1);
  });
});

describe("fake Anthropic: script and records", () => {
  it("serves the queue first, then the handler (a string is a text reply), and records every request", async () => {
    fake.enqueue(textReply("queued"));
    fake.setHandler((request) => `handled #${request.number}`);
    const first = (await (await post(BODY)).json()) as { content: Array<{ text: string }> };
    const second = (await (await post(BODY)).json()) as { content: Array<{ text: string }> };
    expect(first.content[0]?.text).toBe("queued");
    expect(second.content[0]?.text).toBe("handled #2");
    const requests = await fake.waitForRequests(2);
    expect(requests.map((request) => request.body.model)).toEqual(["claude-test", "claude-test"]);
    expect(requests[0]?.headers["x-api-key"]).toBe("k");
    expect(requests[0]?.receivedAt).toBeLessThanOrEqual(requests[1]?.receivedAt ?? 0);
    expect(requests[0]?.arrivedAt).toBeLessThan(requests[1]?.arrivedAt ?? 0);
    expect(requests[1]?.arrivedAt).toBeLessThanOrEqual(performance.now());
  });

  it("turns a throwing handler into a 500 that says so", async () => {
    fake.setHandler(() => {
      throw new Error("boom");
    });
    const response = await post(BODY);
    expect(response.status).toBe(500);
    expect(await response.text()).toContain("the handler threw at request #1: boom");
  });

  it("waitForRequests rejects with how many arrived when too few came", async () => {
    await expect(fake.waitForRequests(1, 50)).rejects.toThrow("got 0 of 1 requests");
  });

  it("answers 404 not_found_error for other paths", async () => {
    const response = await post(BODY, HEADERS, "/v1/complete");
    expect(response.status).toBe(404);
    expect(await response.json()).toMatchObject({ type: "error", error: { type: "not_found_error" } });
  });
});
