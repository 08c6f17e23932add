import { deadLetterInputs, inboxDeadLetters, retryQuarantinedEntries } from "@moniro/bus";
import type { Subjects } from "@moniro/envelopes";
import { createKeys, deleteKeys, type RedisClient, RedisInbox, scanKeys } from "@moniro/store";
import type { JetStreamClient } from "@nats-io/jetstream";
import type { GatewayLogger } from "../ports.js";

const escapeGlob = (text: string): string => text.replace(/[*?[\]\\]/g, "\\$&");

/** Where the inputs still queued for a removed agent go: `<ns>.dlq.in` on JetStream. */
export interface CleanupDlq {
  /** The JetStream client, asked for per use (throws while NATS is not connected). */
  js: () => JetStreamClient;
  subjects: Subjects;
  logger: GatewayLogger;
}

/**
 * Removes what Redis holds of agents (docs/redis-keys.md): for an inline agent
 * of a stopped instance every key under its hash tag `{a:<agent>}` (state,
 * inboxes, threads, memory, …) and its entries of the sweeper's indexes; for a
 * ref agent of a discarded workspace only its thread of that workspace's context.
 */
export class AgentStateCleanup {
  private readonly keys: ReturnType<typeof createKeys>;
  private readonly inbox: RedisInbox;

  constructor(
    private readonly redis: RedisClient,
    private readonly prefix: string,
    private readonly dlq: CleanupDlq,
  ) {
    this.keys = createKeys(prefix);
    // An entry that cannot be decoded is no input anyone can take: moved to the DLQ, as a runner does.
    this.inbox = new RedisInbox(redis, {
      prefix,
      ...inboxDeadLetters(dlq.js, dlq.subjects, dlq.logger),
    });
  }

  /**
   * Removes an agent's keys. The inputs still queued in its inbox first go to
   * the DLQ with `reason` (no accepted input is dropped silently), each with
   * the msg id `removed:<agent>:<envelope id>` a runner draining the removed
   * agent uses too, so an input gets one record. When they cannot be moved
   * (NATS down), the keys are kept: a runner's drain of the removed agent moves
   * the inputs later.
   */
  async removeAgent(agent: string, reason: string): Promise<void> {
    if (!(await this.moveInputsToDlq(agent, reason))) return;
    // Entries once quarantined (the DLQ was down) go to the DLQ now; one it still refuses is kept, with the agent's keys.
    const quarantine = this.keys.inboxQuarantine(agent);
    if ((await retryQuarantinedEntries(this.inbox, agent, this.dlq.logger)) !== 0) {
      this.dlq.logger.warn(
        { agent, quarantine },
        "a removed agent has undecodable inbox entries the DLQ could not take; its Redis keys are kept",
      );
      return;
    }
    const lanes = new Set(this.inbox.laneKeys(agent));
    for await (const keys of scanKeys(this.redis, `${escapeGlob(this.prefix)}{a:${agent}}:*`)) {
      await deleteKeys(
        this.redis,
        keys.filter((key) => !lanes.has(key)),
      );
    }
    // The lanes last, and only once empty: an input a runner appended meanwhile (it had not heard
    // of the removal yet) goes to the DLQ first, never out with the keys.
    for (let attempt = 1; !(await this.inbox.deleteIfEmpty(agent)); attempt++) {
      if (attempt > 3) {
        this.dlq.logger.warn(
          { agent },
          "inputs keep arriving for a removed agent; its inbox is kept (a runner's drain moves them)",
        );
        return;
      }
      if (!(await this.moveInputsToDlq(agent, reason))) return;
    }
    await Promise.all([
      this.redis.srem(this.keys.pendingAgents, agent),
      this.redis.srem(this.keys.activeAgents, agent),
    ]);
  }

  /** The agent's queued inputs to the DLQ; false (logged) when they could not be moved: its keys are then kept. */
  private async moveInputsToDlq(agent: string, reason: string): Promise<boolean> {
    try {
      const moved = await deadLetterInputs(this.dlq.js, this.dlq.subjects, this.inbox, agent, {
        reason,
        key: "removed",
      });
      if (moved > 0)
        this.dlq.logger.warn({ agent, inputs: moved, reason }, "inputs of a removed agent moved to the DLQ");
      return true;
    } catch (error) {
      this.dlq.logger.warn(
        { agent, err: (error as Error)?.message },
        "could not move a removed agent's queued inputs to the DLQ; its Redis keys are kept (a runner's drain moves them)",
      );
      return false;
    }
  }

  async removeThread(agent: string, context: string): Promise<void> {
    await deleteKeys(this.redis, [
      this.keys.thread(agent, context),
      this.keys.threadEnvelopes(agent, context),
      this.keys.threadMeta(agent, context),
    ]);
  }
}
