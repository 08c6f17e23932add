import type { Bus } from "@moniro/bus";
import type { Subjects, ToolCallEnvelope, ToolResultEnvelopeInput } from "@moniro/envelopes";
import type { ToolOutcome } from "@moniro/tool-catalog";
import { relayCall } from "./relay-call.js";
import { errorOutcome } from "./tool-results.js";

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
  const relayed = await relayCall(call, subject, deps);
  if ("failed" in relayed) {
    if (relayed.failed === "no-responders") return "gone";
    return {
      outcome: errorOutcome(
        HANDOFF_LOST,
        `Tool executor ${to}, which took over the '${call.tool}' call, stopped answering before its deadline: it died or is overloaded. The call may or may not have taken effect; check before retrying.`,
      ),
    };
  }
  if ("invalid" in relayed) {
    return {
      outcome: errorOutcome(
        "tool-failed",
        `Tool executor ${to}, which took over the '${call.tool}' call, answered with an invalid result (${relayed.invalid}).`,
      ),
    };
  }
  return relayed;
}
