import type { InboundEnvelope } from "@moniro/envelopes";
import { lastToken } from "@moniro/envelopes";
import type { Inbox } from "@moniro/ports";
import type { AgentDirectory } from "./agent-directory.js";
import type { AgentRuntime } from "./agent-runtime.js";
import type { RuntimeLogger } from "./logger.js";
import { errorFields, silentLogger } from "./logger.js";

export type IngestOutcome =
  | { kind: "appended" | "duplicate" }
  /** Not deliverable: goes to the DLQ with this reason (nothing was appended). */
  | { kind: "rejected"; reason: string };

/**
 * The ingest step of `moniro.in.<agent>`: append to the agent's inbox
 * (deduplicated by envelope id) and resolve, so the caller acks the JetStream
 * message only once the input is durable in Redis; then wake the agent.
 * Rejects (DLQ) an envelope for an agent without a definition, or one whose
 * subject names another agent than the envelope does.
 */
export function createIngest(options: {
  inbox: Inbox;
  directory: AgentDirectory;
  runtime: Pick<AgentRuntime, "wake">;
  logger?: RuntimeLogger;
}): (envelope: InboundEnvelope, subject: string, trace?: { traceparent?: string }) => Promise<IngestOutcome> {
  const logger = options.logger ?? silentLogger;
  return async (envelope, subject, trace = {}) => {
    const agent = envelope.agent;
    const addressed = lastToken(subject);
    if (addressed !== agent) {
      return {
        kind: "rejected",
        reason: `envelope for agent '${agent}' was published on '${subject}', the subject of agent '${addressed}'; publish it on the subject of '${agent}'`,
      };
    }
    if (!options.directory.get(agent)) return { kind: "rejected", reason: options.directory.explainMissing(agent) };
    // The traceparent (of the span that received it) lets the cycle handling it join the sender's trace.
    const { duplicate } = await options.inbox.append(
      envelope,
      trace.traceparent ? { traceparent: trace.traceparent } : {},
    );
    // After the caller's ack: a failed wake costs nothing, the sweeper finds the input within a sweep period.
    setImmediate(() => {
      options.runtime.wake(agent).then(
        (result) => logger.debug({ agent, envelopeId: envelope.id, duplicate, wake: result }, "input ingested"),
        (error: unknown) => logger.warn({ agent, envelopeId: envelope.id, ...errorFields(error) }, "wake failed"),
      );
    });
    return { kind: duplicate ? "duplicate" : "appended" };
  };
}
