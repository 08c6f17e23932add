import { isPlainObject } from "../safe-json.js";

/** A content block as the client sent it (PROTOCOLS.md B1); fields beyond `type` depend on the type. */
export interface FakeRequestBlock {
  type: string;
  text?: string;
  id?: string;
  name?: string;
  input?: Record<string, unknown>;
  tool_use_id?: string;
  content?: string | Array<{ type: string; text?: string }>;
  is_error?: boolean;
  cache_control?: CacheControl;
}

/** `{type: "ephemeral"}`, optionally with `ttl: "5m" | "1h"`. */
export interface CacheControl {
  type: string;
  ttl?: string;
}

export interface FakeRequestMessage {
  role: "user" | "assistant";
  content: string | FakeRequestBlock[];
}

/** The parsed body of `POST /v1/messages` (what tests inspect). */
export interface FakeRequestBody {
  model: string;
  max_tokens: number;
  messages: FakeRequestMessage[];
  system?: string | Array<{ type: "text"; text: string; cache_control?: CacheControl }>;
  tools?: Array<{
    name: string;
    description?: string;
    input_schema: Record<string, unknown>;
    cache_control?: CacheControl;
  }>;
  stream?: boolean;
  [field: string]: unknown;
}

const MAX_CACHE_BREAKPOINTS = 4;

/**
 * The checks the real API makes that catch the mistakes a client is likely
 * to make (required fields, tool_use/tool_result pairing and order, empty
 * text, too many cache breakpoints). Returns the 400 message, or undefined.
 * Messages mimic the API's wording.
 */
export function invalidRequestReason(body: unknown, path: string): string | undefined {
  if (!isPlainObject(body)) return "the request body must be a JSON object";
  if (typeof body.model !== "string" || body.model.length === 0) return "model: Field required";
  if (path === "/v1/messages" && (!Number.isInteger(body.max_tokens) || (body.max_tokens as number) < 1)) {
    return "max_tokens: Field required (a positive integer)";
  }
  if (!Array.isArray(body.messages) || body.messages.length === 0) return "messages: at least one message is required";
  const tools = body.tools ?? [];
  if (!Array.isArray(tools)) return "tools: Input should be a valid list";
  for (const [index, tool] of tools.entries()) {
    if (!isPlainObject(tool) || typeof tool.name !== "string") return `tools.${index}.name: Field required`;
    if (!isPlainObject(tool.input_schema) || tool.input_schema.type !== "object") {
      return `tools.${index}.input_schema.type: Input should be 'object'`;
    }
  }
  return messagesReason(body.messages) ?? cacheReason(body);
}

function blocksOf(message: Record<string, unknown>): Array<Record<string, unknown>> {
  const content = message.content;
  if (typeof content === "string") return [{ type: "text", text: content }];
  return Array.isArray(content) ? content.filter(isPlainObject) : [];
}

function messagesReason(messages: unknown[]): string | undefined {
  let openToolUses: string[] = [];
  for (const [index, message] of messages.entries()) {
    if (!isPlainObject(message) || (message.role !== "user" && message.role !== "assistant")) {
      return `messages.${index}.role: Input should be 'user' or 'assistant'`;
    }
    if (typeof message.content !== "string" && !Array.isArray(message.content)) {
      return `messages.${index}.content: Field required`;
    }
    const blocks = blocksOf(message);
    if (blocks.length === 0) return `messages.${index}: all messages must have non-empty content`;
    for (const [at, block] of blocks.entries()) {
      if (block.type === "text" && (typeof block.text !== "string" || block.text.trim() === "")) {
        return `messages.${index}.content.${at}.text: text content blocks must contain non-whitespace text`;
      }
    }
    const results = blocks.filter((block) => block.type === "tool_result");
    if (message.role === "user") {
      const firstOther = blocks.findIndex((block) => block.type !== "tool_result");
      if (firstOther !== -1 && blocks.slice(firstOther).some((block) => block.type === "tool_result")) {
        return `messages.${index}: \`tool_result\` blocks must come first in the user message content`;
      }
      const answered = results.map((block) => String(block.tool_use_id));
      const unknown = answered.filter((id) => !openToolUses.includes(id));
      if (unknown.length > 0) {
        return `messages.${index}.content.0: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${unknown.join(", ")}. Each \`tool_result\` block must have a corresponding \`tool_use\` block in the previous message.`;
      }
      const missing = openToolUses.filter((id) => !answered.includes(id));
      if (missing.length > 0) {
        return `messages.${index - 1}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${missing.join(", ")}. Each \`tool_use\` block must have a corresponding \`tool_result\` block in the next message.`;
      }
      openToolUses = [];
    } else {
      if (results.length > 0) return `messages.${index}: \`tool_result\` blocks may only appear in user messages`;
      if (openToolUses.length > 0) {
        return `messages.${index - 1}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${openToolUses.join(", ")}. Each \`tool_use\` block must have a corresponding \`tool_result\` block in the next message.`;
      }
      openToolUses = blocks.filter((block) => block.type === "tool_use").map((block) => String(block.id));
    }
  }
  return undefined;
}

function cacheReason(body: Record<string, unknown>): string | undefined {
  const marked = cacheSegments(body as FakeRequestBody).filter((segment) => segment.breakpoint);
  if (marked.length > MAX_CACHE_BREAKPOINTS) {
    return `A maximum of ${MAX_CACHE_BREAKPOINTS} blocks with cache_control may be provided. Found ${marked.length}.`;
  }
  const shortBefore = marked.findIndex((segment) => segment.ttl === "5m");
  if (shortBefore !== -1 && marked.slice(shortBefore).some((segment) => segment.ttl === "1h")) {
    return "a cache_control block with ttl='1h' cannot come after one with ttl='5m' (tools, system, messages order)";
  }
  return undefined;
}

export interface CacheSegment {
  /** The block as it counts for the cache key: its JSON without `cache_control`. */
  text: string;
  breakpoint: boolean;
  ttl?: "5m" | "1h";
}

/** The prompt in the API's cache order (tools, system, messages), one segment per block. */
export function cacheSegments(body: FakeRequestBody): CacheSegment[] {
  const segments: CacheSegment[] = [];
  const add = (part: unknown) => {
    if (!isPlainObject(part) || !isPlainObject(part.cache_control)) {
      segments.push({ text: JSON.stringify(part), breakpoint: false });
      return;
    }
    const { cache_control: control, ...rest } = part;
    segments.push({ text: JSON.stringify(rest), breakpoint: true, ttl: control.ttl === "1h" ? "1h" : "5m" });
  };
  for (const tool of body.tools ?? []) add(tool);
  if (typeof body.system === "string") add(body.system);
  else for (const block of body.system ?? []) add(block);
  for (const message of body.messages) {
    if (typeof message.content === "string") add(`${message.role}:${message.content}`);
    else for (const block of message.content) add({ role: message.role, ...block });
  }
  return segments;
}
