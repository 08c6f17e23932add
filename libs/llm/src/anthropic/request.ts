import type Anthropic from "@anthropic-ai/sdk";
import type { LlmContentBlock, LlmMessage, LlmRequest } from "@moniro/ports";

const EPHEMERAL = { type: "ephemeral" } as const;

/**
 * Maps the port's request onto the Messages API body. With caching on, three
 * of the four allowed `cache_control` breakpoints are used (the API caches
 * the prompt prefix in the order tools → system → messages):
 * - the last tool: the tool schemas rarely change, so they stay cached even
 *   when the system prompt (memory, todos) does;
 * - the system prompt: covers tools + system;
 * - the last block of the last message: the conversation so far, so the next
 *   step of the same cycle reads it from cache and pays only for what it adds.
 */
export function toAnthropicParams(
  request: LlmRequest,
  options: { promptCaching: boolean },
): Anthropic.MessageCreateParamsStreaming {
  const cache = options.promptCaching;
  const messages = request.messages.map(toMessageParam);
  if (cache) markLastBlock(messages);
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

function toBlockParam(block: LlmContentBlock): Anthropic.ContentBlockParam {
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

function markLastBlock(messages: Anthropic.MessageParam[]): void {
  const last = messages.at(-1);
  if (!last || typeof last.content === "string") return;
  const block = last.content.at(-1);
  if (block && (block.type === "text" || block.type === "tool_result" || block.type === "tool_use")) {
    block.cache_control = EPHEMERAL;
  }
}
