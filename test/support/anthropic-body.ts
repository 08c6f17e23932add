/** The parts of an Anthropic Messages request body (PROTOCOLS.md B1) the e2e tests read. */
export interface AnthropicBlock {
  type: string;
  text?: string;
  id?: string;
  name?: string;
  input?: Record<string, unknown>;
  tool_use_id?: string;
  content?: string | Array<{ type: string; text?: string }>;
  is_error?: boolean;
}
export interface AnthropicMessage {
  role: "user" | "assistant";
  content: string | AnthropicBlock[];
}
export interface AnthropicRequestBody {
  model: string;
  system?: string | Array<{ type: string; text: string }>;
  messages: AnthropicMessage[];
  tools?: Array<{ name: string }>;
}

export function blocksOf(message: AnthropicMessage): AnthropicBlock[] {
  return typeof message.content === "string" ? [{ type: "text", text: message.content }] : message.content;
}

export function systemText(body: AnthropicRequestBody): string {
  if (typeof body.system === "string") return body.system;
  return (body.system ?? []).map((block) => block.text).join("\n");
}

/** Text of a tool_result block (string or text blocks). */
export function resultText(block: AnthropicBlock): string {
  if (typeof block.content === "string") return block.content;
  return (block.content ?? []).map((part) => part.text ?? "").join("");
}

/** Every user text block of the window, in order. */
export function userTexts(body: AnthropicRequestBody): string[] {
  return body.messages
    .filter((message) => message.role === "user")
    .flatMap(blocksOf)
    .filter((block) => block.type === "text")
    .map((block) => block.text ?? "");
}

/** How many times `needle` occurs in the user text of the window. */
export function occurrences(body: AnthropicRequestBody, needle: string): number {
  return userTexts(body).reduce((count, text) => count + text.split(needle).length - 1, 0);
}

/** Every tool_use block the window replays (the assistant's earlier calls). */
export function toolUses(body: AnthropicRequestBody): AnthropicBlock[] {
  return body.messages
    .filter((message) => message.role === "assistant")
    .flatMap(blocksOf)
    .filter((block) => block.type === "tool_use");
}

export function lastMessage(body: AnthropicRequestBody): AnthropicMessage {
  const last = body.messages.at(-1);
  if (!last) throw new Error("the request has no messages");
  return last;
}

/**
 * The conversation of a request without prompt-caching marks: the provider
 * moves `cache_control` to the newest block on every call, so comparing two
 * windows means comparing their content.
 */
export function windowOf(body: AnthropicRequestBody): unknown[] {
  return JSON.parse(JSON.stringify(body.messages, (key, value) => (key === "cache_control" ? undefined : value)));
}
