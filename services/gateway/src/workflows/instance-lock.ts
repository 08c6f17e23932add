import { randomUUID } from "node:crypto";
import { createKeys, type Keys, type RedisClient } from "@moniro/store";
import { HttpError } from "../http/http-error.js";

const RELEASE = `if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end`;

/**
 * Serializes the starts and stops of one instance across every gateway
 * replica: a Redis key `<prefix>{w:<workflow>:<tag>}:lifecycle` set NX with a
 * lease (so a crashed holder frees it). A second start or stop while one runs
 * waits up to `waitMs`, then gets a 409 `instance_busy`.
 */
export class InstanceLock {
  private readonly keys: Keys;

  constructor(
    private readonly redis: RedisClient,
    prefix: string,
    private readonly options: { leaseMs?: number; waitMs?: number } = {},
  ) {
    this.keys = createKeys(prefix);
  }

  key(workflow: string, tag: string): string {
    return this.keys.workspace(workflow, tag).lifecycle;
  }

  /** Runs `work` holding the lock; `leaseMs` bounds how long a crashed holder keeps others out. */
  async run<T>(
    workflow: string,
    tag: string,
    work: () => Promise<T>,
    leaseMs = this.options.leaseMs ?? 60_000,
  ): Promise<T> {
    const key = this.key(workflow, tag);
    const token = randomUUID();
    const deadline = Date.now() + (this.options.waitMs ?? 2_000);
    for (let delay = 5; ; delay = Math.min(delay * 2, 100)) {
      if ((await this.redis.set(key, token, "PX", leaseMs, "NX")) === "OK") break;
      if (Date.now() >= deadline) {
        throw new HttpError(
          409,
          "instance_busy",
          `another start or stop of ${workflow}:${tag} is under way: retry when it is done (GET /v1/workflows/${workflow}/instances/${tag} shows its state)`,
          { "Retry-After": "1" },
        );
      }
      await new Promise((wake) => setTimeout(wake, delay));
    }
    try {
      return await work();
    } finally {
      await this.redis.eval(RELEASE, 1, key, token).catch(() => undefined);
    }
  }
}
