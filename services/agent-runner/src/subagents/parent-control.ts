import { isChildName } from "@moniro/envelopes";
import type { ChildRecords } from "@moniro/store";
import type { AgentRuntime } from "../runtime/agent-runtime.js";
import type { RuntimeLogger } from "../runtime/logger.js";
import { errorFields } from "../runtime/logger.js";
import type { InternalChannel } from "./internal-channel.js";

/**
 * Control with the parent ↔ child lifecycle: canceling or pausing a parent
 * cancels its live children (a `cancel` envelope to each over the internal
 * channel). Every runner receives a control request and may send the
 * cancels too; a child handles a second cancel as a no-op.
 */
export function withChildCancel(
  runtime: Pick<AgentRuntime, "control">,
  deps: { records: ChildRecords; channel: InternalChannel; logger: RuntimeLogger; now: () => number },
): Pick<AgentRuntime, "control"> {
  return {
    async control(agent, op, reason) {
      const reply = await runtime.control(agent, op, reason);
      if ((op === "cancel" || op === "pause") && !isChildName(agent)) {
        await cancelChildren(agent, `${agent} was ${op === "cancel" ? "canceled" : "paused"}`, deps);
      }
      return reply;
    },
  };
}

export async function cancelChildren(
  parent: string,
  why: string,
  deps: { records: ChildRecords; channel: InternalChannel; logger: RuntimeLogger; now: () => number },
): Promise<string[]> {
  const children = await deps.records.liveChildren(parent);
  await Promise.all(
    children.map(async (child) => {
      const record = await deps.records.get(child);
      if (!record) return;
      await deps.channel
        .send({
          from: parent,
          to: child,
          text: why,
          meta: { kind: "cancel", parent, child, callId: record.definition.callId },
          now: deps.now(),
        })
        .catch((error: unknown) =>
          deps.logger.warn({ parent, child, ...errorFields(error) }, "could not send a cancel to a sub-agent"),
        );
    }),
  );
  return children;
}
