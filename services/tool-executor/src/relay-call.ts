import type { Bus } from "@moniro/bus";
import { requestFailure } from "@moniro/bus";
import type { ToolCallEnvelope, ToolResultEnvelopeInput } from "@moniro/envelopes";
import { decode, TOOL_LOST_AFTER_MS, toolResultEnvelopeSchema } from "@moniro/envelopes";
import type { ToolOutcome } from "@moniro/tool-catalog";
import { deadlineOutcome } from "./tool-results.js";

/** What came of passing a call on to another executor; each caller words the failures for its case. */
export type Relayed =
  | { reply: ToolResultEnvelopeInput }
  /** The deadline had passed: nothing was sent. */
  | { outcome: ToolOutcome }
  /** `no-responders`: nobody listens there (the call did not run); `silent`: no answer until the deadline (it may have run). */
  | { failed: "no-responders" | "silent" }
  /** The other executor answered with something that is not a tool result (the decode error). */
  | { invalid: string };

/**
 * Sends a call to another executor's subject (a handoff, a process owner) as
 * a request with keepalives until the call's deadline, and returns that
 * executor's reply as it is (its `executorId`), decoded.
 */
export async function relayCall(
  call: ToolCallEnvelope,
  subject: string,
  deps: { bus: Pick<Bus, "request">; now: () => number },
): Promise<Relayed> {
  const remaining = call.deadlineMs - deps.now();
  if (remaining <= 0) return { outcome: deadlineOutcome(call.tool, call.deadlineMs) };
  let bytes: Uint8Array;
  try {
    bytes = await deps.bus.request(subject, call, { timeoutMs: remaining, idleMs: TOOL_LOST_AFTER_MS });
  } catch (error) {
    const failure = requestFailure(error);
    if (failure === "no-responders") return { failed: "no-responders" };
    if (failure === "timeout" || failure === "lost") return { failed: "silent" };
    throw error;
  }
  const decoded = decode(toolResultEnvelopeSchema, bytes, "tool result");
  return decoded.ok ? { reply: decoded.value } : { invalid: decoded.error.message };
}
