import type { LlmMessage, LlmRequest, LlmToolSpec } from "@moniro/ports";
import { toBlockParam } from "./request.js";

const CACHE_CONTROL_TAIL = ',"cache_control":{"type":"ephemeral"}}';

const encoder = new TextEncoder();
/** UTF-8 bytes in a buffer of their own (not a slice of Node's shared pool, which a cached slice would pin). */
const utf8 = (text: string): Uint8Array => encoder.encode(text);
const COMMA = utf8(",");
/** A breakpoint's tail and the two closing brackets of the message it ends (`…}]}`). */
const MARKED_MESSAGE_END = utf8(`${CACHE_CONTROL_TAIL}]}`);
const TOOL_END = utf8("}");
const TOOL_END_MARKED = utf8(CACHE_CONTROL_TAIL);

/**
 * The request body as UTF-8 JSON, byte for byte what `JSON.stringify` of
 * `toAnthropicParams(request, options)` gives (the SDK's own encoding), but
 * built from pieces remembered between calls: an agent sends the same 23
 * tool schemas and, from its thread, mostly the same messages on every call
 * (the window hands out the same message objects for unchanged entries), so
 * only what is new is serialised. A `cache_control` breakpoint is added where
 * the SDK's encoding puts it (the last key of the block it marks). One piece
 * of bytes is kept per message (about the size of its text), none per block.
 *
 * The pieces are kept as bytes and the body is one copy of them: a body
 * built as text (about 40 KB for 80 messages) was a concatenated string that
 * Node flattened to count its bytes, copied again behind the HTTP head and
 * encoded to UTF-8 on every call (issue 17: the largest allocation per DM).
 *
 * Messages and tool specs are keyed by identity (WeakMap: nothing
 * outlives the objects) and must not be mutated after they were sent once;
 * the window and the tool registry only ever create new ones.
 */
export class RequestJsonEncoder {
  private readonly tools = new WeakMap<LlmToolSpec, Uint8Array>();
  private readonly messages = new WeakMap<LlmMessage, Uint8Array>();

  encode(request: LlmRequest, options: { promptCaching: boolean }): Buffer {
    const cache = options.promptCaching;
    const { messages } = request;
    const marked = cache ? cachePrefixMarks(messages) : NO_MARKS;
    const parts: Uint8Array[] = [
      utf8(`{"model":${JSON.stringify(request.model)},"max_tokens":${JSON.stringify(request.maxTokens)},"messages":[`),
    ];
    for (let m = 0; m < messages.length; m++) {
      if (m > 0) parts.push(COMMA);
      const json = this.message(messages[m] as LlmMessage);
      // A breakpoint goes last in the last block: before its closing brace and the two that follow.
      if (marked.has(m)) parts.push(json.subarray(0, json.length - 3), MARKED_MESSAGE_END);
      else parts.push(json);
    }
    let tail = '],"stream":true';
    if (request.system.trim().length > 0) {
      tail += `,"system":[${open({ type: "text", text: request.system })}${cache ? CACHE_CONTROL_TAIL : "}"}]`;
    }
    if (request.tools.length > 0) {
      parts.push(utf8(`${tail},"tools":[`));
      const last = request.tools.length - 1;
      for (let t = 0; t <= last; t++) {
        if (t > 0) parts.push(COMMA);
        parts.push(this.tool(request.tools[t] as LlmToolSpec), cache && t === last ? TOOL_END_MARKED : TOOL_END);
      }
      parts.push(utf8("]}"));
    } else {
      parts.push(utf8(`${tail}}`));
    }
    return Buffer.concat(parts);
  }

  /** A message's JSON bytes (without a breakpoint); kept per message (the window reuses them). */
  private message(message: LlmMessage): Uint8Array {
    let json = this.messages.get(message);
    if (json === undefined) {
      const { role, content } = sendable(message);
      json = utf8(
        `{"role":${JSON.stringify(role)},"content":[${content.map((block) => JSON.stringify(toBlockParam(block))).join(",")}]}`,
      );
      this.messages.set(message, json);
    }
    return json;
  }

  private tool(tool: LlmToolSpec): Uint8Array {
    let json = this.tools.get(tool);
    if (json === undefined) {
      json = utf8(open({ name: tool.name, description: tool.description, input_schema: tool.inputSchema }));
      this.tools.set(tool, json);
    }
    return json;
  }
}

const NO_MARKS: ReadonlySet<number> = new Set();

/** An object's JSON without its closing brace. */
function open(value: object): string {
  return JSON.stringify(value).slice(0, -1);
}

/** As `toAnthropicParams`: blank text blocks are left out, unless nothing else is left. */
function sendable(message: LlmMessage): LlmMessage {
  const blocks = message.content.filter((block) => block.type !== "text" || block.text.trim().length > 0);
  return blocks.length === message.content.length || blocks.length === 0 ? message : { ...message, content: blocks };
}

/** The messages whose last block carries a breakpoint (see `toAnthropicParams`; blank-text filtering never empties a message). */
function cachePrefixMarks(messages: readonly LlmMessage[]): ReadonlySet<number> {
  const marks = new Set<number>();
  const last = messages.length - 1;
  if (last >= 0 && (messages[last] as LlmMessage).content.length > 0) marks.add(last);
  const lastAssistant = messages.findLastIndex((message) => message.role === "assistant");
  if (lastAssistant > 0 && (messages[lastAssistant - 1] as LlmMessage).content.length > 0) marks.add(lastAssistant - 1);
  return marks;
}
