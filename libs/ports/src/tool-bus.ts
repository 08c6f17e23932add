import type { ToolCallEnvelope, ToolResultEnvelope } from "@moniro/envelopes";

/** Dispatches tool calls to the tool-executor fleet. The runner never executes a tool itself. */
export interface ToolBus {
  /**
   * Rejects with ToolBusError when no executor answers, the executor is lost
   * or the deadline passes; `signal` cancels the running call.
   */
  call(call: ToolCallEnvelope, options?: { signal?: AbortSignal }): Promise<ToolResultEnvelope>;
}
