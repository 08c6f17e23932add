import { FakeClock } from "@moniro/ports/test";
import { CachedThreadStore, DEFAULT_THREAD_CACHE } from "./cached-thread-store.js";
import { describeAgentStateContract } from "./contract/agent-state.contract.js";
import { describeInboxContract } from "./contract/inbox.contract.js";
import { describeLeaseContract } from "./contract/lease.contract.js";
import { describeRunEndContract } from "./contract/run-end.contract.js";
import { describeThreadStoreContract } from "./contract/thread-store.contract.js";
import { RedisAgentStateStore } from "./redis-agent-state-store.js";
import { RedisInbox } from "./redis-inbox.js";
import { RedisLease } from "./redis-lease.js";
import { RedisRunEnd } from "./redis-run-end.js";
import { RedisThreadStore } from "./redis-thread-store.js";
import { testRedis } from "./test/redis-fixture.js";

// The Redis adapters against real Redis (127.0.0.1:6379), one random key
// prefix per test, deleted afterwards. Lease expiry is Redis server time, so
// passTime really waits.
const realTime = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

describeInboxContract("RedisInbox", () => {
  const t = testRedis();
  const clock = new FakeClock();
  return {
    inbox: new RedisInbox(t.redis, { prefix: t.prefix, clock }),
    clock,
    reopen: () => new RedisInbox(t.connect(), { prefix: t.prefix, clock }),
    cleanup: t.cleanup,
  };
});

describeLeaseContract("RedisLease", () => {
  const t = testRedis();
  return { lease: new RedisLease(t.redis, { prefix: t.prefix }), passTime: realTime, cleanup: t.cleanup };
});

describeThreadStoreContract("RedisThreadStore", () => {
  const t = testRedis();
  return {
    threads: new RedisThreadStore(t.redis, { prefix: t.prefix }),
    lease: new RedisLease(t.redis, { prefix: t.prefix }),
    passTime: realTime,
    cleanup: t.cleanup,
  };
});

describeThreadStoreContract("CachedThreadStore over RedisThreadStore", () => {
  const t = testRedis();
  const threads = new CachedThreadStore(new RedisThreadStore(t.redis, { prefix: t.prefix }), DEFAULT_THREAD_CACHE);
  return {
    threads,
    lease: new RedisLease(t.redis, { prefix: t.prefix }),
    passTime: realTime,
    cleanup: async () => {
      threads.close();
      await t.cleanup();
    },
  };
});

describeAgentStateContract("RedisAgentStateStore", () => {
  const t = testRedis();
  const clock = new FakeClock();
  return { state: new RedisAgentStateStore(t.redis, { prefix: t.prefix, clock }), clock, cleanup: t.cleanup };
});

describeRunEndContract("RedisRunEnd", () => {
  const t = testRedis();
  const clock = new FakeClock();
  const options = { prefix: t.prefix, clock };
  return {
    runEnd: new RedisRunEnd(t.redis, options),
    lease: new RedisLease(t.redis, options),
    inbox: new RedisInbox(t.redis, options),
    state: new RedisAgentStateStore(t.redis, options),
    clock,
    cleanup: t.cleanup,
  };
});
