import type { InboundEnvelope } from "@moniro/envelopes";
import { lastToken, notAParticipant, refusalText, workflowNotRunning } from "@moniro/envelopes";
import type { AppendOptions, Inbox, WorkspaceRefusal } from "@moniro/ports";
import { membershipOf, splitContext, type WorkspaceStore } from "@moniro/store";
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
  /**
   * Tells the runner holding `agent` that input landed in its inbox, as a local ingest tells the
   * loop: its loop reads the inbox at once (queue mode `interrupt`: the current step is aborted;
   * the others: the checkpoint's read taken ahead is refreshed, loop/inbox-ahead.ts). Called only
   * when the agent is held by another runner, once the input is durable.
   */
  notifyHolder?: (agent: string) => void;
  /** Inputs in a workspace context are taken only while the instance runs with the agent as a member. */
  workspaces?: WorkspaceStore;
  /**
   * The membership check and the append in one step (RedisInbox.appendAsMember over the same
   * Redis as `workspaces`; it answers undefined where it cannot, on a cluster): one round trip
   * where the check and the append took two.
   */
  appendAsMember?: (
    envelope: InboundEnvelope,
    workspace: { workflow: string; tag: string },
    options: AppendOptions,
  ) => Promise<{ duplicate: boolean } | { refused: WorkspaceRefusal }> | undefined;
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
    const definition = options.directory.get(agent) ?? (await options.directory.load?.(agent));
    if (!definition) return { kind: "rejected", reason: options.directory.explainMissing(agent) };
    // The traceparent (of the span that received it) lets the cycle handling it join the sender's trace.
    const appendOptions = trace.traceparent ? { traceparent: trace.traceparent } : {};
    // Personal context (most inputs): the append alone. A workspace context: the membership check and the
    // append in one script where the inbox can, else one read of the instance before the append.
    const workspace = options.workspaces ? splitContext(envelope.context) : undefined;
    let appended: Promise<{ duplicate: boolean } | { refused: WorkspaceRefusal }>;
    const checked = workspace && options.appendAsMember?.(envelope, workspace, appendOptions);
    if (checked) {
      appended = checked;
    } else {
      if (workspace && options.workspaces) {
        const membership = await membershipOf(options.workspaces, agent, workspace);
        if (!membership.ok) return { kind: "rejected", reason: refusalOf(membership.refused, agent, workspace) };
      }
      appended = options.inbox.append(envelope, appendOptions);
    }
    // Woken twice, neither waited for (the caller acks meanwhile; a failed wake costs nothing, the
    // sweeper finds the input within a sweep period). The first wake's lease attempt goes out right
    // behind the append (one round trip on the runner's pipelined connection). The second, once the
    // input is durable, is what guarantees the wakeup: the producer tries the lease after appending.
    // It costs nothing while the first one's attempt or run is still going ("running-here").
    const wake = (when: string, duplicate?: boolean) =>
      options.runtime.wake(agent).then(
        (result) => {
          logger.debug({ agent, envelopeId: envelope.id, duplicate, wake: result, when }, "input ingested");
          return result;
        },
        (error: unknown) => {
          logger.warn({ agent, envelopeId: envelope.id, when, ...errorFields(error) }, "wake failed");
          return undefined;
        },
      );
    // (Checked in the append's own script, a refused input was not written: this wake then finds nothing new.)
    const ahead = wake("ahead");
    const outcome = await appended;
    if ("refused" in outcome && workspace) {
      return { kind: "rejected", reason: refusalOf(outcome.refused, envelope.agent, workspace) };
    }
    const duplicate = "duplicate" in outcome && outcome.duplicate;
    const after = wake("after append", duplicate);
    // A holder elsewhere learns of the input now, as a loop here would (its inbox read, not a later one).
    // Either wake may be the one that finds the lease held (the later one answers "running-here"
    // while the first is still trying); the input is durable by now.
    const { notifyHolder } = options;
    if (notifyHolder && !duplicate) {
      void Promise.all([ahead, after]).then((results) => {
        if (results.includes("held-elsewhere")) notifyHolder(agent);
      });
    }
    return { kind: duplicate ? "duplicate" : "appended" };
  };
}

/** The seed's refusal (as the CLI prints it) for an input in a workspace context the agent may not work in. */
function refusalOf(refused: WorkspaceRefusal, agent: string, workspace: { workflow: string; tag: string }): string {
  return refusalText(
    refused === "workflow_not_running"
      ? workflowNotRunning(workspace.workflow, workspace.tag)
      : notAParticipant(agent, workspace.workflow),
  );
}
