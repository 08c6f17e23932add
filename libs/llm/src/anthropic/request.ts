import type Anthropic from "@anthropic-ai/sdk";
import type { LlmContentBlock, LlmMessage, LlmRequest } from "@moniro/ports";

const EPHEMERAL = { type: "ephemeral" } as const;

/**
 * Maps the port's request onto the Messages API body. With caching on, all
 * four allowed `cache_control` breakpoints are used; the API caches the
 * prompt prefix in the order tools → system → messages, byte for byte:
 * - the last tool: the tool schemas rarely change, so they stay cached even
 *   when the system prompt (memory, todos) does;
 * - the system prompt: covers tools + system;
 * - the last block of the message before the last assistant message: where the
 *   previous call's prompt ended (the previous step of the cycle, or the call
 *   that answered the last input with a `final` message), so this call reads it
 *   from cache by exact match, however many blocks the step added;
 * - the last block of the last message: the conversation so far, written for
 *   the next step or the next cycle (which finds it within the API's lookback
 *   of 20 blocks, or by the breakpoint above).
 * A breakpoint on a prefix already cached costs nothing; a prefix shorter than
 * the model's minimum (1,024 tokens for Sonnet/Opus) is not cached at all.
 */
export function toAnthropicParams(
  request: LlmRequest,
  options: { promptCaching: boolean },
): Anthropic.MessageCreateParamsStreaming {
  const cache = options.promptCaching;
  const messages = request.messages.map(toMessageParam);
  if (cache) markCachePrefixes(messages);
  const params: Anthropic.MessageCreateParamsStreaming = {
    model: request.model,
    max_tokens: request.maxTokens,
    messages,
    stream: true,
  };
  if (request.system.trim().length > 0) {
    params.system = [{ type: "text", text: request.system, ...(cache ? { cache_control: EPHEMERAL } : {}) }];
  }
  if (request.tools.length > 0) {
    params.tools = request.tools.map((tool, index) => ({
      name: tool.name,
      description: tool.description,
      input_schema: tool.inputSchema as Anthropic.Tool.InputSchema,
      ...(cache && index === request.tools.length - 1 ? { cache_control: EPHEMERAL } : {}),
    }));
  }
  return params;
}

function toMessageParam(message: LlmMessage): Anthropic.MessageParam {
  // The API refuses blank text blocks; an aborted step can leave one behind.
  const blocks = message.content.filter((block) => block.type !== "text" || block.text.trim().length > 0);
  return { role: message.role, content: (blocks.length > 0 ? blocks : message.content).map(toBlockParam) };
}

/** A content block as the Messages API takes it (request-json.ts encodes the same objects). */
export function toBlockParam(block: LlmContentBlock): Anthropic.ContentBlockParam {
  switch (block.type) {
    case "text":
      return { type: "text", text: block.text };
    case "tool_use":
      return { type: "tool_use", id: block.id, name: block.name, input: block.input };
    case "tool_result":
      return {
        type: "tool_result",
        tool_use_id: block.tool_use_id,
        content: block.content,
        ...(block.is_error ? { is_error: true } : {}),
      };
  }
}

/** The moving breakpoints: the end of the previous call's prompt, and the end of this one's. */
function markCachePrefixes(messages: Anthropic.MessageParam[]): void {
  markLastBlock(messages.at(-1));
  const lastAssistant = messages.findLastIndex((message) => message.role === "assistant");
  if (lastAssistant > 0) markLastBlock(messages[lastAssistant - 1]);
}

function markLastBlock(message: Anthropic.MessageParam | undefined): void {
  if (!message || typeof message.content === "string") return;
  const block = message.content.at(-1);
  if (block && (block.type === "text" || block.type === "tool_result" || block.type === "tool_use")) {
    block.cache_control = EPHEMERAL;
  }
}
