import type { LlmMessage, LlmRequest, LlmToolSpec } from "@moniro/ports";
import { toBlockParam } from "./request.js";

const UTF8 = new TextEncoder();
const utf8 = (text: string): Uint8Array => UTF8.encode(text);

const CACHE_CONTROL_TAIL = utf8(',"cache_control":{"type":"ephemeral"}}');
const COMMA = utf8(",");
const CLOSE_OBJECT = utf8("}");
const CLOSE_ARRAY = utf8("]");
/** What follows a message's last block: the content array's and the message's closing brackets. */
const CLOSE_MESSAGE = utf8("]}");
const STREAM = utf8('],"stream":true');
const TOOLS = utf8(',"tools":[');

/**
 * The request body as UTF-8 JSON, byte for byte what `JSON.stringify` of
 * `toAnthropicParams(request, options)` gives (the SDK's own encoding), but
 * built from pieces remembered between calls: an agent sends the same 23
 * tool schemas and, from its thread, mostly the same messages on every call
 * (the window hands out the same message objects for unchanged entries), so
 * only what is new is serialised. A `cache_control` breakpoint is added where
 * the SDK's encoding puts it (the last key of the block it marks).
 *
 * Pieces are kept as bytes (one per message, about the size of its text; none
 * per block) and the body is one copy of them: no JSON text of the whole
 * request is built, flattened and encoded to UTF-8 on every call (with 80
 * messages of history that was ~40 KB of short-lived heap per call, twice).
 *
 * Messages and tool specs are keyed by identity (WeakMap: nothing
 * outlives the objects) and must not be mutated after they were sent once;
 * the window and the tool registry only ever create new ones.
 */
export class RequestJsonEncoder {
  private readonly tools = new WeakMap<LlmToolSpec, Uint8Array>();
  private readonly messages = new WeakMap<LlmMessage, Uint8Array>();

  encode(request: LlmRequest, options: { promptCaching: boolean }): Uint8Array {
    const cache = options.promptCaching;
    const { messages } = request;
    const marked = cache ? cachePrefixMarks(messages) : NO_MARKS;
    const pieces: Uint8Array[] = [
      utf8(`{"model":${JSON.stringify(request.model)},"max_tokens":${JSON.stringify(request.maxTokens)},"messages":[`),
    ];
    for (let m = 0; m < messages.length; m++) {
      if (m > 0) pieces.push(COMMA);
      const json = this.message(messages[m] as LlmMessage);
      // A breakpoint goes last in the last block: before its closing brace and the two brackets that follow.
      if (marked.has(m)) pieces.push(json.subarray(0, json.length - 3), CACHE_CONTROL_TAIL, CLOSE_MESSAGE);
      else pieces.push(json);
    }
    pieces.push(STREAM);
    if (request.system.trim().length > 0) {
      pieces.push(
        utf8(`,"system":[${open({ type: "text", text: request.system })}`),
        cache ? CACHE_CONTROL_TAIL : CLOSE_OBJECT,
        CLOSE_ARRAY,
      );
    }
    if (request.tools.length > 0) {
      pieces.push(TOOLS);
      const last = request.tools.length - 1;
      for (let t = 0; t <= last; t++) {
        if (t > 0) pieces.push(COMMA);
        pieces.push(
          this.tool(request.tools[t] as LlmToolSpec),
          cache && t === last ? CACHE_CONTROL_TAIL : CLOSE_OBJECT,
        );
      }
      pieces.push(CLOSE_ARRAY);
    }
    pieces.push(CLOSE_OBJECT);
    return Buffer.concat(pieces);
  }

  /** A message's JSON bytes, kept per message (the window reuses them). */
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

  /** A tool spec's JSON bytes without the closing brace (a breakpoint may follow). */
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
