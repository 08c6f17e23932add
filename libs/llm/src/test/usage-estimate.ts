import type { ReplyUsage } from "./message-events.js";
import type { FakeMessageReply } from "./replies.js";

/** About four characters per token: close enough for tests that read the numbers. */
export function estimateTokens(characters: number): number {
  return Math.ceil(characters / 4);
}

/** The reply's usage: the cache simulation's input figures, the reply's output estimated; the reply's own `usage` wins. */
export function replyUsage(reply: FakeMessageReply, cache: Omit<ReplyUsage, "output_tokens">): ReplyUsage {
  const output = reply.content.reduce(
    (sum, block) => sum + (block.type === "text" ? block.text.length : JSON.stringify(block.input).length + 20),
    0,
  );
  return {
    ...cache,
    input_tokens: reply.usage?.input_tokens ?? Math.max(1, cache.input_tokens),
    output_tokens: reply.usage?.output_tokens ?? Math.max(1, estimateTokens(output)),
    cache_creation_input_tokens: reply.usage?.cache_creation_input_tokens ?? cache.cache_creation_input_tokens,
    cache_read_input_tokens: reply.usage?.cache_read_input_tokens ?? cache.cache_read_input_tokens,
  };
}
