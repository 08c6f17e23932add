import {
  FakeClock,
  InMemoryAgentStateStore,
  InMemoryInbox,
  InMemoryLease,
  InMemoryPersonalContext,
  InMemoryRunEnd,
  InMemoryThreadStore,
} from "@moniro/ports/test";
import { CachedThreadStore, DEFAULT_THREAD_CACHE } from "./cached-thread-store.js";
import { describeAgentStateContract } from "./contract/agent-state.contract.js";
import { describeInboxContract } from "./contract/inbox.contract.js";
import { describeLeaseContract } from "./contract/lease.contract.js";
import { describePersonalContextContract } from "./contract/personal-context.contract.js";
import { describeRunEndContract } from "./contract/run-end.contract.js";
import { describeThreadStoreContract } from "./contract/thread-store.contract.js";

// The in-memory fakes of @moniro/ports/test against the same suites as the
// Redis adapters (contracts.int.test.ts), so the fakes cannot drift.

describeInboxContract("InMemoryInbox", () => {
  const clock = new FakeClock();
  const lease = new InMemoryLease(clock);
  const inbox = new InMemoryInbox(clock, lease);
  // One process holds the fake's state, so "another runner" sees the same instance.
  return { inbox, lease, clock, reopen: () => inbox };
});

describeLeaseContract("InMemoryLease", () => {
  const clock = new FakeClock();
  return {
    lease: new InMemoryLease(clock),
    passTime: async (ms) => clock.advance(ms),
  };
});

describeThreadStoreContract("InMemoryThreadStore", () => {
  const clock = new FakeClock();
  const lease = new InMemoryLease(clock);
  const state = new InMemoryAgentStateStore(clock);
  const inbox = new InMemoryInbox(clock);
  return {
    threads: new InMemoryThreadStore({ lease, clock, state, inbox }),
    lease,
    state,
    inbox,
    passTime: async (ms) => clock.advance(ms),
  };
});

describeThreadStoreContract("CachedThreadStore over InMemoryThreadStore", () => {
  const clock = new FakeClock();
  const lease = new InMemoryLease(clock);
  const state = new InMemoryAgentStateStore(clock);
  const inbox = new InMemoryInbox(clock);
  return {
    threads: new CachedThreadStore(new InMemoryThreadStore({ lease, clock, state, inbox }), {
      ...DEFAULT_THREAD_CACHE,
      clock,
    }),
    lease,
    state,
    inbox,
    passTime: async (ms) => clock.advance(ms),
  };
});

describeAgentStateContract("InMemoryAgentStateStore", () => {
  const clock = new FakeClock();
  return { state: new InMemoryAgentStateStore(clock), clock };
});

describeRunEndContract("InMemoryRunEnd", () => {
  const clock = new FakeClock();
  const lease = new InMemoryLease(clock);
  const inbox = new InMemoryInbox(clock);
  const state = new InMemoryAgentStateStore(clock);
  const threads = new InMemoryThreadStore({ lease, clock, state, inbox });
  return { runEnd: new InMemoryRunEnd({ lease, inbox, state, threads }), threads, lease, inbox, state, clock };
});

describePersonalContextContract("InMemoryPersonalContext", () => {
  const clock = new FakeClock();
  return { context: new InMemoryPersonalContext(clock), clock };
});
