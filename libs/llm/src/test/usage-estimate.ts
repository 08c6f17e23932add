import type { ReplyUsage } from "./message-events.js";
import type { FakeMessageReply } from "./replies.js";
import { cacheSegments, type FakeRequestBody } from "./request-body.js";

/** About four characters per token: close enough for tests that read the numbers. */
export function estimateTokens(characters: number): number {
  return Math.ceil(characters / 4);
}

/**
 * Simulates prompt caching the way the API reports it: the prompt up to each
 * `cache_control` breakpoint is a cache entry; a request reads the longest
 * entry an earlier request wrote and writes the rest up to its last
 * breakpoint; what follows the last breakpoint is plain input. The
 * reply's own `usage` overrides any of the numbers.
 */
export class PromptCacheSimulator {
  private readonly written = new Set<string>();

  usageFor(body: FakeRequestBody, reply: FakeMessageReply): ReplyUsage {
    const segments = cacheSegments(body);
    let prefix = "";
    let readChars = 0;
    let lastBreakpointChars = 0;
    const keys: string[] = [];
    for (const segment of segments) {
      prefix += segment.text;
      if (!segment.breakpoint) continue;
      keys.push(prefix);
      lastBreakpointChars = prefix.length;
      if (this.written.has(prefix)) readChars = prefix.length;
    }
    for (const key of keys) this.written.add(key);
    const total = estimateTokens(prefix.length);
    const read = estimateTokens(readChars);
    const creation = estimateTokens(lastBreakpointChars) - read;
    const output = reply.content.reduce(
      (sum, block) => sum + (block.type === "text" ? block.text.length : JSON.stringify(block.input).length + 20),
      0,
    );
    return {
      input_tokens: reply.usage?.input_tokens ?? Math.max(1, total - read - creation),
      output_tokens: reply.usage?.output_tokens ?? Math.max(1, estimateTokens(output)),
      cache_creation_input_tokens: reply.usage?.cache_creation_input_tokens ?? creation,
      cache_read_input_tokens: reply.usage?.cache_read_input_tokens ?? read,
    };
  }
}
