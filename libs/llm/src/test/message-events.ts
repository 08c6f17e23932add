import type { FakeContentBlock, FakeMessageReply } from "./replies.js";

/** Final token counts of one reply (already estimated where the script left them out). */
export interface ReplyUsage {
  input_tokens: number;
  output_tokens: number;
  cache_creation_input_tokens: number;
  cache_read_input_tokens: number;
  cache_creation?: { ephemeral_5m_input_tokens: number; ephemeral_1h_input_tokens: number };
}

export interface SseEvent {
  event: string;
  data: Record<string, unknown>;
}

/** The non-streamed response body (PROTOCOLS.md B1). */
export function messageBody(id: string, model: string, reply: FakeMessageReply, usage: ReplyUsage) {
  return {
    id,
    type: "message",
    role: "assistant",
    model,
    content: reply.content,
    stop_reason: reply.stopReason,
    stop_sequence: null,
    usage: { ...usage, service_tier: "standard" },
  };
}

/**
 * The SSE events of one streamed reply, in the order of PROTOCOLS.md B2:
 * message_start, then per block content_block_start / deltas / stop (a ping
 * after the first start), message_delta with stop_reason and the cumulative
 * output_tokens, message_stop. Text and tool JSON arrive in several deltas.
 */
export function messageEvents(id: string, model: string, reply: FakeMessageReply, usage: ReplyUsage): SseEvent[] {
  const events: SseEvent[] = [
    {
      event: "message_start",
      data: {
        type: "message_start",
        message: {
          id,
          type: "message",
          role: "assistant",
          model,
          content: [],
          stop_reason: null,
          stop_sequence: null,
          usage: { ...usage, output_tokens: 1, service_tier: "standard" },
        },
      },
    },
  ];
  reply.content.forEach((block, index) => {
    events.push({
      event: "content_block_start",
      data: { type: "content_block_start", index, content_block: start(block) },
    });
    if (index === 0) events.push({ event: "ping", data: { type: "ping" } });
    for (const delta of deltas(block)) {
      events.push({ event: "content_block_delta", data: { type: "content_block_delta", index, delta } });
    }
    events.push({ event: "content_block_stop", data: { type: "content_block_stop", index } });
  });
  if (reply.streamError) {
    events.push({ event: "error", data: { type: "error", error: reply.streamError } });
    return events;
  }
  events.push({
    event: "message_delta",
    data: {
      type: "message_delta",
      delta: { stop_reason: reply.stopReason, stop_sequence: null },
      usage: { output_tokens: usage.output_tokens },
    },
  });
  events.push({ event: "message_stop", data: { type: "message_stop" } });
  return events;
}

export function formatSse(event: SseEvent): string {
  return `event: ${event.event}\ndata: ${JSON.stringify(event.data)}\n\n`;
}

function start(block: FakeContentBlock): Record<string, unknown> {
  if (block.type === "text") return { type: "text", text: "" };
  return { type: "tool_use", id: block.id, name: block.name, input: {} };
}

function deltas(block: FakeContentBlock): Array<Record<string, unknown>> {
  if (block.type === "text") return textChunks(block.text).map((text) => ({ type: "text_delta", text }));
  // Like the real API: an empty first fragment, then the JSON cut at arbitrary points.
  const json = JSON.stringify(block.input);
  const third = Math.max(1, Math.ceil(json.length / 3));
  const parts = [""];
  for (let at = 0; at < json.length; at += third) parts.push(json.slice(at, at + third));
  return parts.map((partial_json) => ({ type: "input_json_delta", partial_json }));
}

/** Splits text into pieces of about three words, keeping every character. */
export function textChunks(text: string): string[] {
  const words = text.match(/\S+\s*|\s+/g) ?? [];
  const chunks: string[] = [];
  for (let i = 0; i < words.length; i += 3) chunks.push(words.slice(i, i + 3).join(""));
  return chunks.length > 0 ? chunks : [text];
}
