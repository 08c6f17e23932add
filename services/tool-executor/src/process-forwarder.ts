import type { Bus } from "@moniro/bus";
import type { Subjects, ToolCallEnvelope, ToolResultEnvelopeInput } from "@moniro/envelopes";
import type { ToolOutcome } from "@moniro/tool-catalog";
import { relayCall } from "./relay-call.js";
import { EXECUTOR_ERRORS, errorOutcome } from "./tool-results.js";

/**
 * Sends a `process` call about a process another executor owns to
 * `moniro.tool.proc.<owner>` and returns the owner's reply as it is. When the
 * owner is gone (no responders) or silent until the deadline, an error
 * outcome says so.
 */
export async function forwardToOwner(
  call: ToolCallEnvelope,
  owner: string,
  deps: { bus: Pick<Bus, "request">; subjects: Subjects; now: () => number },
): Promise<{ reply: ToolResultEnvelopeInput } | { outcome: ToolOutcome }> {
  const processId = String(call.input.processId);
  let subject: string;
  try {
    subject = deps.subjects.toolProc(owner);
  } catch {
    return {
      outcome: errorOutcome(
        "process-not-found",
        `There is no background process '${processId}'. Use process with action 'list' to see yours.`,
      ),
    };
  }
  const relayed = await relayCall(call, subject, deps);
  if ("failed" in relayed) {
    return {
      outcome: errorOutcome(
        EXECUTOR_ERRORS.ownerGone,
        relayed.failed === "no-responders"
          ? `The executor that owned process ${processId} is gone (${owner} no longer answers), and the process went with it. Start it again with process action 'start'.`
          : `The executor that owned process ${processId} (${owner}) stopped answering before the deadline: it is overloaded or gone. Try again, or start the process again.`,
      ),
    };
  }
  if ("invalid" in relayed) {
    return {
      outcome: errorOutcome(
        "tool-failed",
        `The executor owning process ${processId} answered with an invalid result (${relayed.invalid}).`,
      ),
    };
  }
  return relayed;
}
