import type { ToolUse } from "@moniro/envelopes";
import type { LlmProvider, LlmRequest, LlmResponse } from "@moniro/ports";

/** What the zero-latency model answers: tool calls (a `tool_use` stop) or none (`end_turn`). */
export interface InstantReply {
  text?: string;
  toolUses?: ToolUse[];
}

/** Decides the reply of one request; `calledAt` is `performance.now()` at the call. */
export type Decide = (agent: string, request: LlmRequest, calledAt: number) => InstantReply;

/**
 * A zero-latency LlmProvider: answers in the same tick it is called, so
 * what a benchmark measures around it is the loop's own work. It keeps no
 * request copies (the memory benchmark must not see the bench's own data).
 */
export function instantLlm(agent: string, decide: Decide): LlmProvider {
  return {
    name: "instant",
    async stream(request: LlmRequest): Promise<LlmResponse> {
      const reply = decide(agent, request, performance.now());
      const toolUses = reply.toolUses ?? [];
      return {
        text: reply.text ?? "",
        toolUses,
        stopReason: toolUses.length > 0 ? "tool_use" : "end_turn",
        usage: { inputTokens: 1, outputTokens: 1 },
      };
    },
  };
}

/** The text of the user turns after the model's last assistant message: the inputs new to this request. */
export function newUserText(request: LlmRequest): string {
  const messages = request.messages;
  let start = messages.length;
  while (start > 0 && messages[start - 1]?.role === "user") start--;
  return messages
    .slice(start)
    .flatMap((message) => message.content)
    .map((block) => (block.type === "text" ? block.text : ""))
    .join("\n");
}

/** Every user text block of the request (tool results left out). */
export function allUserText(request: LlmRequest): string {
  return request.messages
    .filter((message) => message.role === "user")
    .flatMap((message) => message.content)
    .map((block) => (block.type === "text" ? block.text : ""))
    .join("\n");
}
