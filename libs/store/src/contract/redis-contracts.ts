import { FakeClock } from "@moniro/ports/test";
import { CachedThreadStore, DEFAULT_THREAD_CACHE } from "../cached-thread-store.js";
import { RedisAgentStateStore } from "../redis-agent-state-store.js";
import { RedisInbox } from "../redis-inbox.js";
import { RedisLease } from "../redis-lease.js";
import { RedisPersonalContext } from "../redis-personal-context.js";
import { RedisRunEnd } from "../redis-run-end.js";
import { RedisThreadStore } from "../redis-thread-store.js";
import type { TestRedis } from "../test/redis-fixture.js";
import { describeAgentStateContract } from "./agent-state.contract.js";
import { describeInboxContract } from "./inbox.contract.js";
import { describeLeaseContract } from "./lease.contract.js";
import { describePersonalContextContract } from "./personal-context.contract.js";
import { describeRunEndContract } from "./run-end.contract.js";
import { describeThreadStoreContract } from "./thread-store.contract.js";

// Lease expiry is Redis server time, so passTime really waits.
const realTime = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Every port contract against the Redis adapters over the Redis `open` gives
 * (a single server or a cluster), one random key prefix per test.
 */
export function describeRedisContracts(label: string, open: () => TestRedis): void {
  describeInboxContract(`RedisInbox${label}`, () => {
    const t = open();
    const clock = new FakeClock();
    return {
      inbox: new RedisInbox(t.redis, { prefix: t.prefix, clock }),
      lease: new RedisLease(t.redis, { prefix: t.prefix }),
      clock,
      reopen: () => new RedisInbox(t.connect(), { prefix: t.prefix, clock }),
      cleanup: t.cleanup,
    };
  });

  describeLeaseContract(`RedisLease${label}`, () => {
    const t = open();
    return { lease: new RedisLease(t.redis, { prefix: t.prefix }), passTime: realTime, cleanup: t.cleanup };
  });

  describeThreadStoreContract(`RedisThreadStore${label}`, () => {
    const t = open();
    return {
      threads: new RedisThreadStore(t.redis, { prefix: t.prefix }),
      lease: new RedisLease(t.redis, { prefix: t.prefix }),
      state: new RedisAgentStateStore(t.redis, { prefix: t.prefix }),
      inbox: new RedisInbox(t.redis, { prefix: t.prefix }),
      passTime: realTime,
      cleanup: t.cleanup,
    };
  });

  describeThreadStoreContract(`CachedThreadStore over RedisThreadStore${label}`, () => {
    const t = open();
    const threads = new CachedThreadStore(new RedisThreadStore(t.redis, { prefix: t.prefix }), DEFAULT_THREAD_CACHE);
    return {
      threads,
      lease: new RedisLease(t.redis, { prefix: t.prefix }),
      state: new RedisAgentStateStore(t.redis, { prefix: t.prefix }),
      inbox: new RedisInbox(t.redis, { prefix: t.prefix }),
      passTime: realTime,
      cleanup: async () => {
        threads.close();
        await t.cleanup();
      },
    };
  });

  describeAgentStateContract(`RedisAgentStateStore${label}`, () => {
    const t = open();
    const clock = new FakeClock();
    return { state: new RedisAgentStateStore(t.redis, { prefix: t.prefix, clock }), clock, cleanup: t.cleanup };
  });

  describeRunEndContract(`RedisRunEnd${label}`, () => {
    const t = open();
    const clock = new FakeClock();
    const options = { prefix: t.prefix, clock };
    const threads = new RedisThreadStore(t.redis, options);
    return {
      runEnd: new RedisRunEnd(t.redis, { ...options, threads }),
      threads,
      lease: new RedisLease(t.redis, options),
      inbox: new RedisInbox(t.redis, options),
      state: new RedisAgentStateStore(t.redis, options),
      clock,
      cleanup: t.cleanup,
    };
  });

  describePersonalContextContract(`RedisPersonalContext${label}`, () => {
    const t = open();
    const clock = new FakeClock();
    return { context: new RedisPersonalContext(t.redis, { prefix: t.prefix, clock }), clock, cleanup: t.cleanup };
  });
}
