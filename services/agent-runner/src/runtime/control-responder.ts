import { subscribeEnvelopes } from "@moniro/bus";
import type { Subjects } from "@moniro/envelopes";
import { controlEnvelopeSchema, lastToken } from "@moniro/envelopes";
import type { NatsConnection, Subscription } from "@nats-io/transport-node";
import type { AgentRuntime } from "./agent-runtime.js";
import type { RuntimeLogger } from "./logger.js";
import { errorFields, silentLogger } from "./logger.js";

/**
 * Answers `moniro.ctl.<agent>` (cancel / pause / resume). Every runner
 * receives every request (no queue group); the runner running the agent
 * answers, or any runner when nobody runs it (the first reply wins). An
 * invalid request is answered with the reason (and recorded on `moniro.dlq.ctl`).
 */
export function startControlResponder(options: {
  nc: NatsConnection;
  subjects: Subjects;
  runtime: Pick<AgentRuntime, "control">;
  logger?: RuntimeLogger;
  onDlq?: (origin: string) => void;
}): Subscription {
  const logger = options.logger ?? silentLogger;
  return subscribeEnvelopes({
    nc: options.nc,
    subject: options.subjects.ctlAll,
    schema: controlEnvelopeSchema,
    origin: "ctl",
    subjects: options.subjects,
    what: "control request",
    logger,
    onDlq: (record) => options.onDlq?.(record.origin),
    invalidReply: (error, msg) => ({ ok: false, agent: lastToken(msg.subject), error: error.message }),
    handler: async (request, msg) => {
      const agent = lastToken(msg.subject);
      if (request.agent !== agent) {
        return {
          ok: false,
          agent,
          op: request.op,
          error: `control request for agent '${request.agent}' was sent on ${msg.subject}; send it on the subject of '${request.agent}'`,
        };
      }
      try {
        return (await options.runtime.control(agent, request.op, request.reason)) ?? undefined;
      } catch (failure) {
        logger.error({ agent, op: request.op, ...errorFields(failure) }, "control request failed");
        return { ok: false, agent, op: request.op, error: (failure as Error)?.message };
      }
    },
  });
}
