import type { Bus } from "@moniro/bus";
import { requestFailure } from "@moniro/bus";
import type { Subjects, ToolCallEnvelope, ToolResultEnvelopeInput } from "@moniro/envelopes";
import { decode, TOOL_LOST_AFTER_MS, toolResultEnvelopeSchema } from "@moniro/envelopes";
import type { ToolOutcome } from "@moniro/tool-catalog";
import { deadlineOutcome, EXECUTOR_ERRORS, errorOutcome } from "./tool-results.js";

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
  const remaining = call.deadlineMs - deps.now();
  if (remaining <= 0) return { outcome: deadlineOutcome(call.tool, call.deadlineMs) };
  let bytes: Uint8Array;
  try {
    bytes = await deps.bus.request(subject, call, { timeoutMs: remaining, idleMs: TOOL_LOST_AFTER_MS });
  } catch (error) {
    const failure = requestFailure(error);
    if (failure === "no-responders") {
      return {
        outcome: errorOutcome(
          EXECUTOR_ERRORS.ownerGone,
          `The executor that owned process ${processId} is gone (${owner} no longer answers), and the process went with it. Start it again with process action 'start'.`,
        ),
      };
    }
    if (failure === "timeout" || failure === "lost") {
      return {
        outcome: errorOutcome(
          EXECUTOR_ERRORS.ownerGone,
          `The executor that owned process ${processId} (${owner}) stopped answering before the deadline: it is overloaded or gone. Try again, or start the process again.`,
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
        `The executor owning process ${processId} answered with an invalid result (${decoded.error.message}).`,
      ),
    };
  }
  return { reply: decoded.value };
}
