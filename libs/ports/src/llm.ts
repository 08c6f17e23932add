import type { ToolUse, Usage } from "@moniro/envelopes";

/**
 * The LLM provider port, in the spirit of vercel/ai's LanguageModel spec: a
 * small neutral shape the loop speaks; adapters (Anthropic, mock) translate.
 */
export type LlmContentBlock =
  | { type: "text"; text: string }
  | { type: "tool_use"; id: string; name: string; input: Record<string, unknown> }
  | { type: "tool_result"; tool_use_id: string; content: string; is_error?: boolean };

export interface LlmMessage {
  role: "user" | "assistant";
  content: LlmContentBlock[];
}

export interface LlmToolSpec {
  name: string;
  description: string;
  /** JSON Schema of the input object. */
  inputSchema: Record<string, unknown>;
}

export interface LlmRequest {
  model: string;
  system: string;
  messages: LlmMessage[];
  tools: LlmToolSpec[];
  maxTokens: number;
}

export interface LlmResponse {
  /** Private monologue: the concatenated text blocks. */
  text: string;
  toolUses: ToolUse[];
  /** `end_turn`, `tool_use`, `max_tokens`, … */
  stopReason: string | null;
  usage: Usage;
}

export interface LlmCallOptions {
  signal?: AbortSignal;
  /** Called for every text delta as it streams (for `llm-delta` events). */
  onTextDelta?: (delta: string) => void;
}

export interface LlmProvider {
  readonly name: string;
  /**
   * Streams one completion. Rejects with an `LlmError` carrying the
   * transient/permanent verdict; never retries itself (the loop owns retries).
   */
  stream(request: LlmRequest, options?: LlmCallOptions): Promise<LlmResponse>;
}
