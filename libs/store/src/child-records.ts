import { decode, type Usage } from "@moniro/envelopes";
import { z } from "zod";
import { createKeys } from "./keys.js";
import type { RedisClient } from "./redis-client.js";
import { runScript } from "./scripts/loader.js";

/** What a child is for (stored as JSON in its record; every runner builds the child from it). */
export const childDefinitionSchema = z.object({
  name: z.string(),
  parent: z.string(),
  callId: z.string(),
  model: z.string(),
  maxSteps: z.number().int().positive(),
  wait: z.boolean(),
  createdAt: z.number(),
  /** The context of the spawning call: the report goes to the thread the call is in. */
  context: z.string().optional(),
});
export type ChildDefinition = z.infer<typeof childDefinitionSchema>;

export const CHILD_STATUSES = ["running", "reported", "canceled", "ended"] as const;
export type ChildStatus = (typeof CHILD_STATUSES)[number];

export interface ChildRecord {
  definition: ChildDefinition;
  status: ChildStatus;
  reportId?: string;
  usage: { inputTokens: number; outputTokens: number };
}

/** How long an ended child's record stays readable (its thread is never deleted). */
const ENDED_RECORD_TTL_S = 24 * 60 * 60;

/**
 * A child's record (`{a:<child>}:subagent`) and its parent's set of live
 * children (`{a:<parent>}:children`). Each command touches one agent's keys,
 * so it runs on Redis Cluster as is.
 */
export class ChildRecords {
  private readonly keys;

  constructor(
    private readonly redis: RedisClient,
    prefix: string,
  ) {
    this.keys = createKeys(prefix);
  }

  async create(definition: ChildDefinition): Promise<void> {
    // Two agents' keys (two slots): two commands, sent together.
    await Promise.all([
      this.redis.hset(this.keys.subagent(definition.name), {
        definition: JSON.stringify(definition),
        status: "running",
      }),
      this.redis.sadd(this.keys.children(definition.parent), definition.name),
    ]);
  }

  async get(child: string): Promise<ChildRecord | undefined> {
    const hash = await this.redis.hgetall(this.keys.subagent(child));
    if (!hash.definition) return undefined;
    const definition = decode(childDefinitionSchema, hash.definition, "sub-agent record");
    if (!definition.ok) return undefined;
    const status = (CHILD_STATUSES as readonly string[]).includes(hash.status ?? "")
      ? (hash.status as ChildStatus)
      : "ended";
    return {
      definition: definition.value,
      status,
      ...(hash.reportId ? { reportId: hash.reportId } : {}),
      usage: { inputTokens: Number(hash.inputTokens ?? 0), outputTokens: Number(hash.outputTokens ?? 0) },
    };
  }

  /** The parent's live children (spawned, not yet removed). */
  async liveChildren(parent: string): Promise<string[]> {
    return (await this.redis.smembers(this.keys.children(parent))).sort();
  }

  async liveCount(parent: string): Promise<number> {
    return this.redis.scard(this.keys.children(parent));
  }

  /**
   * Records a report (`recordReport-1.lua`): its envelope id is set once (a runner that takes a
   * crashed child over publishes it again under the same id: delivered once), the child's token use
   * stored. A child its parent removed already (this report answers a follow-up it took after that)
   * has what it spent since added to the parent's figures, once. Returns the first report's id.
   */
  async recordReport(child: string, parent: string, reportId: string, usage: Usage): Promise<string> {
    const reply = (await runScript(
      this.redis,
      "recordReport",
      [this.keys.subagent(child)],
      [reportId, usage.inputTokens, usage.outputTokens],
    )) as [string, number, number] | null;
    if (!reply) return reportId;
    const [stored, input, output] = reply;
    await this.rollUp(parent, { children: 0, input, output });
    return stored;
  }

  /** Marks a child canceled; false when it has no record (unknown, or removed already). */
  async markCanceled(child: string): Promise<boolean> {
    const key = this.keys.subagent(child);
    if (!(await this.redis.exists(key))) return false;
    await this.redis.hset(key, { status: "canceled" });
    return true;
  }

  /** Token use of a parent's ended children, rolled up. */
  async childUsage(parent: string): Promise<{ children: number; inputTokens: number; outputTokens: number }> {
    const hash = await this.redis.hgetall(this.keys.childUsage(parent));
    return {
      children: Number(hash.children ?? 0),
      inputTokens: Number(hash.inputTokens ?? 0),
      outputTokens: Number(hash.outputTokens ?? 0),
    };
  }

  /**
   * The child has ended (report delivered, or canceled): out of its parent's
   * live set, its token use added to the parent's figures once (a report it
   * sends later, on a follow-up, adds what it spent since), its record kept a
   * day for inspection (`removeChild-1.lua`). Its thread stays.
   */
  async remove(child: string, parent: string): Promise<void> {
    const removed = await this.redis.srem(this.keys.children(parent), child);
    const [input, output] = (await runScript(
      this.redis,
      "removeChild",
      [this.keys.subagent(child)],
      [removed === 1 ? "1" : "0", ENDED_RECORD_TTL_S],
    )) as [number, number];
    if (removed === 1) await this.rollUp(parent, { children: 1, input, output });
  }

  /** Adds to a parent's figures of its ended children (one HINCRBY each, sent together). */
  private async rollUp(parent: string, add: { children: number; input: number; output: number }): Promise<void> {
    if (add.children === 0 && add.input === 0 && add.output === 0) return;
    const usageKey = this.keys.childUsage(parent);
    await this.redis
      .multi()
      .hincrby(usageKey, "children", add.children)
      .hincrby(usageKey, "inputTokens", add.input)
      .hincrby(usageKey, "outputTokens", add.output)
      .exec();
  }
}
