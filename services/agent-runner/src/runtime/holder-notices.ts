import type { Subjects } from "@moniro/envelopes";
import { lastToken } from "@moniro/envelopes";
import type { NatsConnection, Subscription } from "@nats-io/transport-node";
import type { AgentRuntime } from "./agent-runtime.js";

/**
 * Runner to runner over `<ns>.runner.input.<agent>` (core NATS, empty body):
 * the runner that ingested an input for an agent another runner holds tells
 * that holder, which tells its loop as a local ingest would (every runner
 * pulls from one shared consumer): queue mode `interrupt` aborts the current
 * step at once wherever the input landed, and the other modes read the inbox
 * ahead of the checkpoint (loop/inbox-ahead.ts). A notice is only a nudge: the
 * holder reads its inbox; a lost one costs at most one step's wait.
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
