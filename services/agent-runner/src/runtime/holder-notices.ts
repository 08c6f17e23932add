import type { Subjects } from "@moniro/envelopes";
import { lastToken } from "@moniro/envelopes";
import type { NatsConnection, Subscription } from "@nats-io/transport-node";
import type { AgentRuntime } from "./agent-runtime.js";

/**
 * Runner to runner over `<ns>.runner.input.<agent>` (core NATS, empty body):
 * the runner that ingested an input for an agent another runner holds tells
 * that holder, so queue mode `interrupt` aborts the current step at once
 * wherever the input landed (every runner pulls from one shared consumer).
 * A notice is only a nudge: the holder reads its inbox; a lost one costs the
 * wait until the next checkpoint.
 */
export function startHolderNotices(options: {
  nc: NatsConnection;
  subjects: Subjects;
  runtime: Pick<AgentRuntime, "inputArrived">;
}): { notify: (agent: string) => void; subscription: Subscription } {
  const { nc, subjects, runtime } = options;
  const subscription = nc.subscribe(subjects.runnerInputAll, {
    callback: (error, msg) => {
      if (!error) runtime.inputArrived(lastToken(msg.subject));
    },
  });
  return { notify: (agent) => nc.publish(subjects.runnerInput(agent)), subscription };
}
