/**
 * What the fake Anthropic server answers to one request. The shapes follow
 * the Messages API (content blocks, `stop_reason` values, error types), so a
 * reply reads like the response it becomes.
 */
export type FakeContentBlock =
  | { type: "text"; text: string }
  | { type: "tool_use"; id: string; name: string; input: Record<string, unknown> };

/** Token counts to report; anything left out is estimated from the request and the reply. */
export interface FakeUsage {
  input_tokens?: number;
  output_tokens?: number;
  cache_creation_input_tokens?: number;
  cache_read_input_tokens?: number;
}

export interface ReplyTiming {
  /** Wait this long before answering (status and headers are sent after it). */
  delayMs?: number;
  /** Wait this long between stream events (makes a step take time). */
  chunkDelayMs?: number;
  /** Streamed only: after `afterEvents` SSE events, wait `ms` once (a step stuck mid-stream). */
  stall?: { afterEvents: number; ms: number };
}

export interface FakeMessageReply extends ReplyTiming {
  kind: "message";
  content: FakeContentBlock[];
  stopReason: "end_turn" | "tool_use" | "max_tokens" | "stop_sequence" | "refusal" | "pause_turn";
  usage?: FakeUsage;
  /** Streamed only: after the content, send `event: error` with this body instead of finishing the message. */
  streamError?: { type: string; message: string };
}

export interface FakeErrorReply {
  kind: "error";
  status: number;
  /** Anthropic error type, e.g. `rate_limit_error`, `overloaded_error`, `invalid_request_error`. */
  type: string;
  message: string;
  /** Seconds for the `retry-after` header. */
  retryAfter?: number;
  delayMs?: number;
}

export type FakeReply = FakeMessageReply | FakeErrorReply;

let toolUseCounter = 0;

/** A reply with only text: the model ends its turn. */
export function textReply(text: string, options: ReplyTiming & { usage?: FakeUsage } = {}): FakeReply {
  return { kind: "message", content: [{ type: "text", text }], stopReason: "end_turn", ...options };
}

export interface FakeToolCall {
  name: string;
  input?: Record<string, unknown>;
  /** Default `toolu_fake_<n>`. */
  id?: string;
}

/** A reply that calls tools, optionally after some text (`stop_reason: tool_use`). */
export function toolUseReply(
  calls: FakeToolCall | FakeToolCall[],
  options: ReplyTiming & { text?: string; usage?: FakeUsage } = {},
): FakeReply {
  const { text, ...rest } = options;
  const list = Array.isArray(calls) ? calls : [calls];
  const content: FakeContentBlock[] = text ? [{ type: "text", text }] : [];
  for (const call of list) {
    toolUseCounter++;
    content.push({
      type: "tool_use",
      id: call.id ?? `toolu_fake_${String(toolUseCounter).padStart(6, "0")}`,
      name: call.name,
      input: call.input ?? {},
    });
  }
  return { kind: "message", content, stopReason: "tool_use", ...rest };
}

/**
 * The simple reply: one `message` call with `final: true`, so the runner ends
 * the turn without asking again (issue 17). `to` defaults to the sender;
 * `monologue` is the private text before the call.
 */
export function messageReply(
  text: string,
  options: ReplyTiming & { to?: string; final?: boolean; id?: string; monologue?: string; usage?: FakeUsage } = {},
): FakeReply {
  const { to, final = true, id, monologue, ...rest } = options;
  const input = { ...(to ? { to } : {}), text, ...(final ? { final: true } : {}) };
  return toolUseReply(
    { name: "message", input, ...(id ? { id } : {}) },
    { ...rest, ...(monologue ? { text: monologue } : {}) },
  );
}

/**
 * An HTTP error with the API's body `{type:"error", error:{type, message}}`:
 * `errorReply(429, "rate_limit_error", "slow down", { retryAfter: 2 })`, or
 * with the error object `errorReply(429, { type, message, retryAfter? })`.
 */
export function errorReply(
  status: number,
  type: string,
  message: string,
  options?: { retryAfter?: number; delayMs?: number },
): FakeReply;
export function errorReply(
  status: number,
  error: { type: string; message: string; retryAfter?: number; delayMs?: number },
): FakeReply;
export function errorReply(
  status: number,
  typeOrError: string | { type: string; message: string; retryAfter?: number; delayMs?: number },
  message = "",
  options: { retryAfter?: number; delayMs?: number } = {},
): FakeReply {
  if (typeof typeOrError === "string") return { kind: "error", status, type: typeOrError, message, ...options };
  return { kind: "error", status, ...typeOrError };
}

/** HTTP 200, a started message, then `event: error` mid-stream (e.g. `overloaded_error`). */
export function streamErrorReply(
  type: string,
  message: string,
  options: ReplyTiming & { text?: string } = {},
): FakeReply {
  const { text, ...rest } = options;
  return {
    kind: "message",
    content: text ? [{ type: "text", text }] : [],
    stopReason: "end_turn",
    streamError: { type, message },
    ...rest,
  };
}

/** One memory as the auto-memory extraction model returns it. */
export interface FakeExtractedMemory {
  kind: "decision" | "pattern" | "outcome";
  key: string;
  value: string;
}

/**
 * The answer agent-runner's auto-memory asks its extraction model for
 * (services/agent-runner/src/memory/extraction-prompt.ts): JSON
 * `{"memories":[{kind,key,value}]}`, an empty list for a trivial exchange.
 */
export function memoryExtractionReply(
  memories: readonly FakeExtractedMemory[] = [],
  options: ReplyTiming = {},
): FakeReply {
  return textReply(JSON.stringify({ memories }), options);
}
