import type { LlmMessage, LlmRequest, LlmToolSpec } from "@moniro/ports";
import { toBlockParam } from "./request.js";

const CACHE_CONTROL_TAIL = ',"cache_control":{"type":"ephemeral"}}';

/**
 * The request body as JSON text, byte for byte what `JSON.stringify` of
 * `toAnthropicParams(request, options)` gives (the SDK's own encoding), but
 * built from pieces remembered between calls: an agent sends the same 23
 * tool schemas and, from its thread, mostly the same messages on every call
 * (the window hands out the same message objects for unchanged entries), so
 * only what is new is serialised. A `cache_control` breakpoint is added where
 * the SDK's encoding puts it (the last key of the block it marks). One JSON
 * text is kept per message (about the size of its text), none per block.
 *
 * Messages and tool specs are keyed by identity (WeakMap: nothing
 * outlives the objects) and must not be mutated after they were sent once;
 * the window and the tool registry only ever create new ones.
 */
export class RequestJsonEncoder {
  private readonly tools = new WeakMap<LlmToolSpec, string>();
  private readonly messages = new WeakMap<LlmMessage, string>();

  encode(request: LlmRequest, options: { promptCaching: boolean }): string {
    const cache = options.promptCaching;
    const { messages } = request;
    const marked = cache ? cachePrefixMarks(messages) : NO_MARKS;
    let json = `{"model":${JSON.stringify(request.model)},"max_tokens":${JSON.stringify(request.maxTokens)},"messages":[`;
    for (let m = 0; m < messages.length; m++) {
      if (m > 0) json += ",";
      json += this.message(messages[m] as LlmMessage, marked.has(m));
    }
    json += '],"stream":true';
    if (request.system.trim().length > 0) {
      json += `,"system":[${open({ type: "text", text: request.system })}${cache ? CACHE_CONTROL_TAIL : "}"}]`;
    }
    if (request.tools.length > 0) {
      json += ',"tools":[';
      const last = request.tools.length - 1;
      for (let t = 0; t <= last; t++) {
        if (t > 0) json += ",";
        json += this.tool(request.tools[t] as LlmToolSpec);
        json += cache && t === last ? CACHE_CONTROL_TAIL : "}";
      }
      json += "]";
    }
    return `${json}}`;
  }

  /** A message's JSON, with or without a breakpoint on its last block; kept per message (the window reuses them). */
  private message(message: LlmMessage, mark: boolean): string {
    let json = this.messages.get(message);
    if (json === undefined) {
      const { role, content } = sendable(message);
      json = `{"role":${JSON.stringify(role)},"content":[${content.map((block) => JSON.stringify(toBlockParam(block))).join(",")}]}`;
      this.messages.set(message, json);
    }
    // A breakpoint goes last in the last block: before its closing brace and the two that follow.
    return mark ? `${json.slice(0, -3)}${CACHE_CONTROL_TAIL}]}` : json;
  }

  private tool(tool: LlmToolSpec): string {
    let json = this.tools.get(tool);
    if (json === undefined) {
      json = open({ name: tool.name, description: tool.description, input_schema: tool.inputSchema });
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
