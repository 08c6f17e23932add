import type { ToolCallEnvelope, ToolResultEnvelope } from "@moniro/envelopes";
import type { Clock } from "../clock.js";
import { systemClock } from "../clock.js";
import { ToolBusError } from "../errors.js";
import type { Ids } from "../ids.js";
import type { ToolBus } from "../tool-bus.js";
import { sequentialIds } from "./ids.js";

export type ToolHandlerResult =
  | string
  | { content: string; isError?: boolean; errorCode?: string; delivers?: string }
  | Error;

export type ToolHandler = (
  input: Record<string, unknown>,
  call: ToolCallEnvelope,
  context: { signal: AbortSignal | undefined },
) => ToolHandlerResult | Promise<ToolHandlerResult>;

export interface FakeToolSpec {
  handler?: ToolHandler;
  /** Clock time the call takes (slept on the bus's clock, abortable). */
  delayMs?: number;
}

/**
 * ToolBus fake: one handler per tool name, every call recorded. A handler may
 * return content, an error result, or an Error (the bus rejects with it). An
 * aborted call rejects with a ToolBusError (code `canceled`) and its id is
 * recorded in `aborted`. Unknown tools get an error result.
 */
export class FakeToolBus implements ToolBus {
  readonly calls: ToolCallEnvelope[] = [];
  readonly aborted: string[] = [];
  private readonly tools: Map<string, FakeToolSpec>;
  private readonly clock: Clock;
  private readonly ids: Ids;

  constructor(tools: Record<string, ToolHandler | FakeToolSpec> = {}, options: { clock?: Clock; ids?: Ids } = {}) {
    this.tools = new Map(
      Object.entries(tools).map(([name, spec]) => [name, typeof spec === "function" ? { handler: spec } : spec]),
    );
    this.clock = options.clock ?? systemClock;
    this.ids = options.ids ?? sequentialIds(900_000);
  }

  /** Adds or replaces a tool. */
  on(name: string, handler: ToolHandler | FakeToolSpec): this {
    this.tools.set(name, typeof handler === "function" ? { handler } : handler);
    return this;
  }

  async call(call: ToolCallEnvelope, options: { signal?: AbortSignal } = {}): Promise<ToolResultEnvelope> {
    this.calls.push(structuredClone(call));
    const { signal } = options;
    const onAbort = () => this.aborted.push(call.callId);
    signal?.addEventListener("abort", onAbort, { once: true });
    try {
      if (signal?.aborted) throw signal.reason;
      const spec = this.tools.get(call.tool);
      if (!spec) return this.result(call, { content: `unknown tool '${call.tool}'`, isError: true });
      if (spec.delayMs) await this.clock.sleep(spec.delayMs, signal);
      const outcome = spec.handler ? await raceAbort(spec.handler(call.input, call, { signal }), signal) : "ok";
      if (outcome instanceof Error) throw outcome;
      return this.result(call, typeof outcome === "string" ? { content: outcome } : outcome);
    } catch (error) {
      if (signal?.aborted) {
        throw new ToolBusError(`tool call ${call.callId} was canceled`, {
          errorClass: "permanent",
          code: "canceled",
          cause: error,
        });
      }
      throw error;
    } finally {
      signal?.removeEventListener("abort", onAbort);
    }
  }

  /** Calls of one tool. */
  callsOf(tool: string): ToolCallEnvelope[] {
    return this.calls.filter((call) => call.tool === tool);
  }

  private result(
    call: ToolCallEnvelope,
    outcome: { content: string; isError?: boolean; errorCode?: string; delivers?: string },
  ): ToolResultEnvelope {
    const now = this.clock.now();
    return {
      v: 1,
      id: this.ids.newId(),
      ts: new Date(now).toISOString(),
      callId: call.callId,
      agent: call.agent,
      tool: call.tool,
      content: outcome.content,
      isError: outcome.isError ?? false,
      ...(outcome.errorCode ? { errorCode: outcome.errorCode } : {}),
      ...(outcome.delivers ? { delivers: outcome.delivers } : {}),
    };
  }
}

function raceAbort<T>(value: T | Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return Promise.resolve(value);
  return new Promise<T>((resolve, reject) => {
    const abort = () => reject(signal.reason);
    signal.addEventListener("abort", abort, { once: true });
    if (signal.aborted) abort();
    Promise.resolve(value).then(
      (v) => {
        signal.removeEventListener("abort", abort);
        resolve(v);
      },
      (e: unknown) => {
        signal.removeEventListener("abort", abort);
        reject(e);
      },
    );
  });
}
