import { createKeys, deleteKeys, type RedisClient, scanKeys } from "@moniro/store";

const escapeGlob = (text: string): string => text.replace(/[*?[\]\\]/g, "\\$&");

/**
 * Removes what Redis holds of agents (docs/redis-keys.md): for an inline agent
 * of a stopped instance every key under its hash tag `{a:<agent>}` (state,
 * inboxes, threads, memory, …) and its entries of the sweeper's indexes; for a
 * ref agent of a discarded workspace only its thread of that workspace's context.
 */
export class AgentStateCleanup {
  private readonly keys: ReturnType<typeof createKeys>;

  constructor(
    private readonly redis: RedisClient,
    private readonly prefix: string,
  ) {
    this.keys = createKeys(prefix);
  }

  async removeAgent(agent: string): Promise<void> {
    for await (const keys of scanKeys(this.redis, `${escapeGlob(this.prefix)}{a:${agent}}:*`)) {
      await deleteKeys(this.redis, keys);
    }
    await Promise.all([
      this.redis.srem(this.keys.pendingAgents, agent),
      this.redis.srem(this.keys.activeAgents, agent),
    ]);
  }

  async removeThread(agent: string, context: string): Promise<void> {
    await deleteKeys(this.redis, [
      this.keys.thread(agent, context),
      this.keys.threadEnvelopes(agent, context),
      this.keys.threadMeta(agent, context),
    ]);
  }
}
