import { type AgentState, agentStateSchema, type ThreadEntry } from "@moniro/envelopes";
import type { RedisClient } from "@moniro/store";
import {
  createKeys,
  decodeThreadEntry,
  ENTRY_FIELD,
  fieldValue,
  RedisAgentStateStore,
  RedisInbox,
  RedisLease,
} from "@moniro/store";
import type { AgentInspector, AgentStatus, ThreadPage, ThreadQuery } from "../ports.js";

/**
 * Reads an agent's state, lease, inbox depth and thread through the
 * libs/store adapters and key layout. Read-only: the gateway never writes an
 * agent's Redis state.
 */
export class RedisInspector implements AgentInspector {
  private readonly state: RedisAgentStateStore;
  private readonly inbox: RedisInbox;
  private readonly lease: RedisLease;
  private readonly keys: ReturnType<typeof createKeys>;

  constructor(
    private readonly redis: RedisClient,
    options: { prefix?: string } = {},
  ) {
    const prefix = options.prefix !== undefined ? { prefix: options.prefix } : {};
    this.state = new RedisAgentStateStore(redis, prefix);
    this.inbox = new RedisInbox(redis, prefix);
    this.lease = new RedisLease(redis, prefix);
    this.keys = createKeys(options.prefix);
  }

  async status(agent: string): Promise<AgentStatus> {
    const [state, lease, inbox] = await Promise.all([
      this.state.get(agent),
      this.lease.current(agent),
      this.inbox.depth(agent),
    ]);
    return { state, lease, inbox };
  }

  /** HGET `state` of each agent, sent back to back on one connection (one round trip for all). */
  async states(agents: readonly string[]): Promise<Array<AgentState | null>> {
    const values = await Promise.all(agents.map((agent) => this.redis.hget(this.keys.state(agent), "state")));
    return values.map((value) => {
      const parsed = agentStateSchema.safeParse(value);
      return parsed.success ? parsed.data : null;
    });
  }

  /**
   * One page of `agent:<a>:thread:<ctx>`: XRANGE after the cursor
   * (oldest-first) or XREVRANGE before it (newest-first), one entry more than
   * asked to know whether another page follows.
   */
  async thread(agent: string, query: ThreadQuery): Promise<ThreadPage> {
    const key = this.keys.thread(agent, query.context);
    const raw =
      query.order === "oldest"
        ? await this.redis.xrange(key, query.cursor ? `(${query.cursor}` : "-", "+", "COUNT", query.limit + 1)
        : await this.redis.xrevrange(key, query.cursor ? `(${query.cursor}` : "+", "-", "COUNT", query.limit + 1);
    const page = raw.slice(0, query.limit);
    const entries: ThreadEntry[] = [];
    const corrupt: ThreadPage["corrupt"] = [];
    for (const [entryId, fields] of page) {
      const json = fieldValue(fields, ENTRY_FIELD);
      const decoded = json === undefined ? undefined : decodeThreadEntry(json);
      if (decoded?.ok) entries.push({ ...decoded.value, entryId } as ThreadEntry);
      else corrupt.push({ entryId, error: decoded ? decoded.error.message : `no field '${ENTRY_FIELD}'` });
    }
    const last = page.at(-1);
    return { entries, corrupt, next: raw.length > query.limit && last ? last[0] : null };
  }
}
