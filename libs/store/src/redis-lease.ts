import type { Fence, Lease } from "@moniro/ports";
import type { Keys } from "./keys.js";
import { createKeys } from "./keys.js";
import type { RedisClient } from "./redis-client.js";
import { runScript } from "./scripts/loader.js";

/** The lease key's value: the epoch first, so a holder id may contain anything. */
export function leaseValue(fence: Pick<Fence, "holder" | "epoch">): string {
  return `${fence.epoch}:${fence.holder}`;
}

export function parseLeaseValue(value: string): { holder: string; epoch: number } | null {
  const colon = value.indexOf(":");
  const epoch = Number(value.slice(0, colon));
  if (colon < 1 || !Number.isSafeInteger(epoch)) return null;
  return { holder: value.slice(colon + 1), epoch };
}

/**
 * `{a:<a>}:lease` (string with PX) plus the fencing epoch `{a:<a>}:epoch`
 * (INCR on every acquisition, never reset). Renew and release act only when
 * holder and epoch still match, in Lua, so a stale runner cannot extend or
 * delete its successor's lease. Expiry is Redis server time.
 */
export class RedisLease implements Lease {
  private readonly keys: Keys;

  constructor(
    private readonly redis: RedisClient,
    options: { prefix?: string } = {},
  ) {
    this.keys = createKeys(options.prefix);
  }

  async acquire(agent: string, holder: string, ttlMs: number): Promise<Fence | null> {
    const epoch = await runScript(
      this.redis,
      "acquireLease",
      [this.keys.lease(agent), this.keys.epoch(agent)],
      [holder, Math.max(1, Math.round(ttlMs))],
    );
    const value = Number(epoch);
    return value > 0 ? { agent, holder, epoch: value } : null;
  }

  async renew(fence: Fence, ttlMs: number): Promise<boolean> {
    const result = await runScript(
      this.redis,
      "renewLease",
      [this.keys.lease(fence.agent)],
      [leaseValue(fence), Math.max(1, Math.round(ttlMs))],
    );
    return result === 1;
  }

  async release(fence: Fence): Promise<void> {
    await runScript(this.redis, "releaseLease", [this.keys.lease(fence.agent)], [leaseValue(fence)]);
  }

  async current(agent: string): Promise<{ holder: string; epoch: number } | null> {
    const value = await this.redis.get(this.keys.lease(agent));
    return value === null ? null : parseLeaseValue(value);
  }
}
