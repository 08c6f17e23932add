import { describe, expect, it } from "vitest";
import { PromptCacheSimulator } from "./prompt-cache.js";
import { type FakeRequestBlock, type FakeRequestBody, invalidRequestReason } from "./request-body.js";

// The prompt-cache simulation of the fake Anthropic server (PROTOCOLS.md B5, the API's prompt-caching docs).

const EPHEMERAL = { type: "ephemeral" };
const SYSTEM = `You are a careful agent. ${"Rules of the house. ".repeat(300)}`; // ≈ 1,500 tokens

function body(blocks: FakeRequestBlock[][], options: { ttl?: "1h"; system?: string } = {}): FakeRequestBody {
  const control = options.ttl ? { ...EPHEMERAL, ttl: options.ttl } : EPHEMERAL;
  return {
    model: "claude-test",
    max_tokens: 100,
    tools: [{ name: "message", input_schema: { type: "object" }, cache_control: control }],
    system: [{ type: "text", text: options.system ?? SYSTEM, cache_control: control }],
    messages: blocks.map((content, index) => ({ role: index % 2 === 0 ? "user" : "assistant", content })),
  };
}

const text = (value: string): FakeRequestBlock => ({ type: "text", text: value });
/** The same block with the moving breakpoint on it. */
const marked = (block: FakeRequestBlock): FakeRequestBlock => ({ ...block, cache_control: EPHEMERAL });

describe("prompt cache simulation", () => {
  it("the first request writes up to its last breakpoint; input_tokens is only what follows it", () => {
    const cache = new PromptCacheSimulator();
    const usage = cache.usageFor(body([[marked(text("[http:bob] hi")), text("tail after the breakpoint")]]), "k");
    expect(usage.cache_read_input_tokens).toBe(0);
    expect(usage.cache_creation_input_tokens).toBeGreaterThan(1400);
    expect(usage.cache_creation.ephemeral_5m_input_tokens).toBe(usage.cache_creation_input_tokens);
    expect(usage.input_tokens).toBeGreaterThan(0);
    expect(usage.input_tokens).toBeLessThan(20);
  });

  it("the next step reads the previous prompt (cache_control moved, within 20 blocks) and writes only what it added", () => {
    const cache = new PromptCacheSimulator();
    const first = cache.usageFor(body([[marked(text("[http:bob] hi"))]]), "k");
    const second = cache.usageFor(
      body([
        [text("[http:bob] hi")],
        [{ type: "tool_use", id: "t1", name: "message", input: { text: "hello" } }],
        [marked({ type: "tool_result", tool_use_id: "t1", content: "sent" })],
      ]),
      "k",
    );
    expect(second.cache_read_input_tokens).toBe(first.cache_creation_input_tokens);
    expect(second.cache_creation_input_tokens).toBeGreaterThan(0);
    expect(second.cache_creation_input_tokens).toBeLessThan(60);
  });

  it("looks back at most 20 blocks: past that only the system breakpoint is read", () => {
    const cache = new PromptCacheSimulator();
    const start = [text("[http:bob] go")];
    const first = cache.usageFor(body([[marked(start[0] as FakeRequestBlock)]]), "k");
    const uses = Array.from({ length: 21 }, (_, i) => ({ type: "tool_use", id: `t${i}`, name: "ls", input: {} }));
    const results = uses.map((use) => ({ type: "tool_result", tool_use_id: use.id, content: "ok" }));
    const later = cache.usageFor(
      body([start, uses, [...results.slice(0, -1), marked(results.at(-1) as FakeRequestBlock)]]),
      "k",
    );
    const systemOnly = cache.usageFor(body([[text("other")]]), "k").cache_read_input_tokens;
    expect(later.cache_read_input_tokens).toBe(systemOnly);
    expect(later.cache_read_input_tokens).toBeLessThan(first.cache_creation_input_tokens);
  });

  it("caches nothing below the minimum length: everything is input", () => {
    const cache = new PromptCacheSimulator();
    const small = body([[marked(text("hi"))]], { system: "short" });
    expect(cache.usageFor(small, "k")).toMatchObject({ cache_creation_input_tokens: 0, cache_read_input_tokens: 0 });
    const again = cache.usageFor(small, "k");
    expect(again.cache_read_input_tokens).toBe(0);
    expect(again.input_tokens).toBeGreaterThan(10);
  });

  it("an entry lives 5 minutes, refreshed by each hit; with ttl 1h an hour", () => {
    let now = 0;
    const cache = new PromptCacheSimulator({ now: () => now });
    const request = body([[marked(text("[http:bob] hi"))]]);
    const written = cache.usageFor(request, "k").cache_creation_input_tokens;
    now = 4 * 60_000;
    expect(cache.usageFor(request, "k").cache_read_input_tokens).toBe(written);
    now = 8 * 60_000; // 4 min after the refresh
    expect(cache.usageFor(request, "k").cache_read_input_tokens).toBe(written);
    now = 14 * 60_000; // 6 min after the last hit: gone, written again
    expect(cache.usageFor(request, "k")).toMatchObject({
      cache_read_input_tokens: 0,
      cache_creation_input_tokens: written,
    });

    // Tools and system for an hour, the conversation for 5 minutes: after 50 minutes only the first part is read.
    const long = body([[marked(text("[http:bob] hi"))]], { ttl: "1h", system: `${SYSTEM} v2` });
    const hour = cache.usageFor(long, "k");
    expect(hour.cache_creation.ephemeral_1h_input_tokens).toBeGreaterThan(1400);
    expect(hour.cache_creation.ephemeral_5m_input_tokens).toBeGreaterThan(0);
    now += 50 * 60_000;
    expect(cache.usageFor(long, "k").cache_read_input_tokens).toBe(hour.cache_creation.ephemeral_1h_input_tokens);
  });

  it("keeps one cache per API key: another key reads nothing", () => {
    const cache = new PromptCacheSimulator();
    const request = body([[marked(text("[http:bob] hi"))]]);
    cache.usageFor(request, "key-a");
    expect(cache.usageFor(request, "key-b").cache_read_input_tokens).toBe(0);
    expect(cache.usageFor(request, "key-a").cache_creation_input_tokens).toBe(0);
  });

  it("refuses a 1h breakpoint after a 5m one, and more than four breakpoints", () => {
    const mixed = body([[{ ...text("x"), cache_control: { type: "ephemeral", ttl: "1h" } }]]);
    expect(invalidRequestReason(mixed, "/v1/messages")).toMatch(/ttl='1h' cannot come after one with ttl='5m'/);
    const many = body([[marked(text("a")), marked(text("b")), marked(text("c"))]]);
    expect(invalidRequestReason(many, "/v1/messages")).toMatch(/maximum of 4 blocks with cache_control/);
  });
});
