import type { ToolUse, Usage } from "@moniro/envelopes";
import type { LlmCallOptions, LlmProvider, LlmRequest, LlmResponse } from "../llm.js";

/** A scripted reply: any part may be left out (text "", no tools, end_turn/tool_use, small usage). */
export type ScriptedReply = Partial<LlmResponse> | Error;

export interface ScriptContext {
  /** 0-based index of this call. */
  index: number;
  signal: AbortSignal | undefined;
  onTextDelta: ((delta: string) => void) | undefined;
}

/** A value (every call), an array (call n gets element n), or a function of the request. */
export type LlmScript =
  | ScriptedReply
  | readonly ScriptedReply[]
  | ((request: LlmRequest, context: ScriptContext) => ScriptedReply | Promise<ScriptedReply>);

/**
 * LlmProvider fake. Records every request (deep-copied, so later mutation by
 * the caller cannot change what was sent), streams the reply text as deltas,
 * rejects when the scripted reply is an Error, and honours the abort signal
 * while a scripted promise is pending.
 */
export class ScriptedLlm implements LlmProvider {
  readonly name = "scripted";
  readonly requests: LlmRequest[] = [];
  readonly calls: Array<{ request: LlmRequest; aborted: boolean }> = [];

  constructor(private readonly script: LlmScript) {}

  async stream(request: LlmRequest, options: LlmCallOptions = {}): Promise<LlmResponse> {
    const index = this.requests.length;
    const copy = structuredClone(request);
    this.requests.push(copy);
    const call = { request: copy, aborted: false };
    this.calls.push(call);
    const { signal, onTextDelta } = options;
    if (signal?.aborted) {
      call.aborted = true;
      throw signal.reason;
    }
    const reply = await abortable(this.next(request, { index, signal, onTextDelta }), signal, () => {
      call.aborted = true;
    });
    if (reply instanceof Error) throw reply;
    const response = complete(reply);
    if (response.text && onTextDelta) {
      const middle = Math.ceil(response.text.length / 2);
      onTextDelta(response.text.slice(0, middle));
      if (middle < response.text.length) onTextDelta(response.text.slice(middle));
    }
    return response;
  }

  /** The last request sent. */
  get lastRequest(): LlmRequest | undefined {
    return this.requests.at(-1);
  }

  private async next(request: LlmRequest, context: ScriptContext): Promise<ScriptedReply> {
    const script = this.script;
    if (typeof script === "function") return script(request, context);
    if (Array.isArray(script)) {
      const reply = (script as readonly ScriptedReply[])[context.index];
      if (reply === undefined) {
        return new Error(`ScriptedLlm: no scripted reply for call ${context.index + 1} (script has ${script.length})`);
      }
      return reply;
    }
    return script as ScriptedReply;
  }
}

function complete(reply: Partial<LlmResponse>): LlmResponse {
  const toolUses = reply.toolUses ?? [];
  const usage: Usage = reply.usage ?? { inputTokens: 10, outputTokens: 5 };
  return {
    text: reply.text ?? "",
    toolUses: structuredClone(toolUses),
    stopReason: reply.stopReason !== undefined ? reply.stopReason : toolUses.length > 0 ? "tool_use" : "end_turn",
    usage,
  };
}

function abortable<T>(promise: Promise<T>, signal: AbortSignal | undefined, onAbort: () => void): Promise<T> {
  if (!signal) return promise;
  return new Promise<T>((resolve, reject) => {
    const abort = () => {
      onAbort();
      reject(signal.reason);
    };
    signal.addEventListener("abort", abort, { once: true });
    if (signal.aborted) abort();
    promise.then(
      (value) => {
        signal.removeEventListener("abort", abort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener("abort", abort);
        reject(error);
      },
    );
  });
}

let toolUseCounter = 0;

/** A reply with text only (ends the cycle). */
export function textReply(text: string, usage?: Usage): Partial<LlmResponse> {
  return usage ? { text, usage } : { text };
}

/** A tool_use block; ids are `toolu_<n>` unless given. */
export function toolUse(name: string, input: Record<string, unknown> = {}, id?: string): ToolUse {
  toolUseCounter++;
  return { id: id ?? `toolu_${toolUseCounter}`, name, input };
}

/** A reply that calls tools (optionally with monologue text). */
export function toolReply(uses: ToolUse | ToolUse[], text = "", usage?: Usage): Partial<LlmResponse> {
  const toolUses = Array.isArray(uses) ? uses : [uses];
  return usage ? { text, toolUses, usage } : { text, toolUses };
}
