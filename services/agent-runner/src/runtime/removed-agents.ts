import { deadLetterInputs } from "@moniro/bus";
import type { Subjects } from "@moniro/envelopes";
import type { Inbox, Lease } from "@moniro/ports";
import type { JetStreamClient } from "@nats-io/jetstream";
import type { LoopDeps } from "../loop/index.js";
import type { RuntimeLogger } from "./logger.js";
import { errorFields } from "./logger.js";

/** The lease a drain holds while it moves a removed agent's inputs to the DLQ. */
const DRAIN_LEASE_MS = 5_000;

/**
 * What happens to an agent removed from the registry (docs/registry.md,
 * "Removal"): a cycle under way finishes; after it, and whenever the agent
 * is not running, every input still in its inbox goes to the DLQ
 * (`<ns>.dlq.in`) with a reason naming the removal, so nothing is dropped
 * silently. `removedReason` says whether (and why) an agent is removed.
 */
export function removedAgents(deps: {
  inbox: Inbox;
  lease: Lease;
  holder: string;
  js: JetStreamClient;
  subjects: Subjects;
  logger: RuntimeLogger;
  removedReason: (agent: string) => string | undefined;
  onDlq?: ((origin: string) => void) | undefined;
}) {
  const { inbox, logger } = deps;

  /** Moves every pending input of `agent` to the DLQ (the caller holds its lease). */
  async function moveToDlq(agent: string, reason: string): Promise<number> {
    // One record per input even when two runners drain (the msg id dedupes).
    const moved = await deadLetterInputs(deps.js, deps.subjects, inbox, agent, { reason, key: "removed" });
    for (let i = 0; i < moved; i++) deps.onDlq?.("in");
    if (moved > 0) logger.warn({ agent, inputs: moved, reason }, "inputs of a removed agent moved to the DLQ");
    return moved;
  }

  return {
    /**
     * A removed agent that does not run anywhere: when inputs wait in its
     * inbox, take its lease, move them to the DLQ, let it go. Its holder does
     * the same after its cycle.
     */
    async drain(agent: string): Promise<number> {
      const reason = deps.removedReason(agent);
      if (!reason) return 0;
      // Nothing waiting: no lease taken. Taking it would write the agent's keys again (its epoch) after
      // whoever removed the agent deleted them (a stopped workflow's inline agent, docs/workflows.md "Stop").
      if ((await inbox.pending(agent)).length === 0) return 0;
      const fence = await deps.lease.acquire(agent, deps.holder, DRAIN_LEASE_MS);
      if (!fence) return 0;
      try {
        return await moveToDlq(agent, reason);
      } catch (error) {
        logger.warn(
          { agent, ...errorFields(error) },
          "could not move a removed agent's inputs to the DLQ; retrying on a sweep",
        );
        return 0;
      } finally {
        await deps.lease.release(fence).catch(() => undefined);
      }
    },

    /**
     * The loop of an agent that may be removed while it runs: once removed it
     * sees no new input (its current cycle ends with what it has) and, as it
     * lets go, its inbox goes to the DLQ.
     */
    loopDeps(agent: string, loop: LoopDeps): LoopDeps {
      const drainIfRemoved = async () => {
        const reason = deps.removedReason(agent);
        if (reason) await moveToDlq(agent, reason);
      };
      const withEntries = loop.runEnd.appendAndReleaseIfIdle?.bind(loop.runEnd);
      return {
        ...loop,
        inbox: {
          append: (envelope, options) => loop.inbox.append(envelope, options),
          ack: (name, items) => loop.inbox.ack(name, items),
          discard: (name, items) => loop.inbox.discard(name, items),
          requeue: (fence, item, changes) => loop.inbox.requeue(fence, item, changes),
          depth: (name) => loop.inbox.depth(name),
          agentsWithPending: () => loop.inbox.agentsWithPending(),
          pending: async (name) => (deps.removedReason(agent) ? [] : loop.inbox.pending(name)),
        },
        runEnd: {
          releaseIfIdle: async (fence, patch) => {
            await drainIfRemoved();
            return loop.runEnd.releaseIfIdle(fence, patch);
          },
          ...(withEntries && {
            appendAndReleaseIfIdle: async (fence, patch, write) => {
              await drainIfRemoved();
              return withEntries(fence, patch, write);
            },
          }),
        },
      };
    },
  };
}
