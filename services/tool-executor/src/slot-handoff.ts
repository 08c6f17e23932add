import type { Bus } from "@moniro/bus";
import { requestFailure } from "@moniro/bus";
import type { Subjects, ToolCallEnvelope, ToolResultEnvelopeInput } from "@moniro/envelopes";
import { decode, TOOL_LOST_AFTER_MS, toolResultEnvelopeSchema } from "@moniro/envelopes";
import type { ToolOutcome } from "@moniro/tool-catalog";
import { deadlineOutcome, errorOutcome } from "./tool-results.js";

/** Error code when the executor a call was handed to stopped answering (it may have run the call). */
export const HANDOFF_LOST = "executor_lost";

/**
 * Sends a call that waited here for a slot to `<ns>.tool.handoff.<to>`, the
 * executor that announced a free one, and returns its reply as it is (its
 * `executorId`). This executor keeps answering the caller (keepalives) until
 * then, so the call keeps one reply subject and one requester. `"gone"`:
 * nobody listens there any more (the call did not run there; wait here
 * instead). Silence until the deadline is an error result that says the call
 * may have run.
 */
export async function handOffCall(
  call: ToolCallEnvelope,
  to: string,
  deps: { bus: Pick<Bus, "request">; subjects: Subjects; now: () => number },
): Promise<{ reply: ToolResultEnvelopeInput } | { outcome: ToolOutcome } | "gone"> {
  let subject: string;
  try {
    subject = deps.subjects.toolHandoff(to);
  } catch {
    return "gone"; // not a valid executor id: no executor can be there
  }
  const remaining = call.deadlineMs - deps.now();
  if (remaining <= 0) return { outcome: deadlineOutcome(call.tool, call.deadlineMs) };
  let bytes: Uint8Array;
  try {
    bytes = await deps.bus.request(subject, call, { timeoutMs: remaining, idleMs: TOOL_LOST_AFTER_MS });
  } catch (error) {
    const failure = requestFailure(error);
    if (failure === "no-responders") return "gone";
    if (failure === "timeout" || failure === "lost") {
      return {
        outcome: errorOutcome(
          HANDOFF_LOST,
          `Tool executor ${to}, which took over the '${call.tool}' call, stopped answering before its deadline: it died or is overloaded. The call may or may not have taken effect; check before retrying.`,
        ),
      };
    }
    throw error;
  }
  const decoded = decode(toolResultEnvelopeSchema, bytes, "tool result");
  if (!decoded.ok) {
    return {
      outcome: errorOutcome(
        "tool-failed",
        `Tool executor ${to}, which took over the '${call.tool}' call, answered with an invalid result (${decoded.error.message}).`,
      ),
    };
  }
  return { reply: decoded.value };
}
