import type { ThreadEntry, ThreadEntryData } from "@moniro/envelopes";
import type { Fence, ThreadReadOptions, ThreadTail } from "@moniro/ports";
import { FakeClock, InMemoryLease, InMemoryThreadStore } from "@moniro/ports/test";
import { beforeEach, describe, expect, it } from "vitest";
import { CachedThreadStore, DEFAULT_THREAD_CACHE, type ThreadCacheOptions } from "./cached-thread-store.js";

/** The in-memory store, counting the reads that reach it. */
class CountingStore extends InMemoryThreadStore {
  fullReads = 0;
  tailReads = 0;

  override async read(agent: string, context: string, options: ThreadReadOptions = {}): Promise<ThreadEntry[]> {
    this.fullReads++;
    return super.read(agent, context, options);
  }

  override async readIfHeld(
    agent: string,
    context: string,
    holder: string,
    options: Pick<ThreadReadOptions, "window" | "last" | "limit">,
  ): Promise<ThreadEntry[] | null> {
    this.fullReads++;
    return super.readIfHeld(agent, context, holder, options);
  }

  override async readTail(agent: string, context: string, after: string, holder?: string): Promise<ThreadTail> {
    this.tailReads++;
    return super.readTail(agent, context, after, holder);
  }
}

let serial = 0;
const input = (text: string): ThreadEntryData => ({
  kind: "input",
  envelopeId: `E${++serial}`,
  source: "http:alice",
  replyTo: "http:alice",
  context: "personal",
  lane: "normal",
  text,
  attachments: [],
  cycleId: "c1",
  ts: 1,
});
const reply = (text: string): ThreadEntryData => ({
  kind: "assistant",
  cycleId: "c1",
  ts: 2,
  step: 0,
  text,
  toolUses: [],
  stopReason: "end_turn",
  usage: { inputTokens: 10, outputTokens: 3 },
});
const compaction = (upTo: string): ThreadEntryData => ({
  kind: "compaction",
  cycleId: "c2",
  ts: 3,
  summary: "earlier turns",
  upTo,
});

describe("CachedThreadStore", () => {
  let clock: FakeClock;
  let lease: InMemoryLease;
  let inner: CountingStore;
  let fence: Fence;

  const cached = (options: Partial<ThreadCacheOptions> = {}) =>
    new CachedThreadStore(inner, { ...DEFAULT_THREAD_CACHE, clock, ...options });

  beforeEach(async () => {
    clock = new FakeClock();
    lease = new InMemoryLease(clock);
    inner = new CountingStore({ lease, clock });
    fence = (await lease.acquire("ada", "r1", 60_000)) as Fence;
  });

  it("opens a thread it read before with one tail read of what was appended since", async () => {
    const threads = cached();
    await threads.append(fence, "personal", [input("one"), reply("a")]);
    expect(await threads.readIfHeld("ada", "personal", "r1", { window: true })).toEqual(
      await inner.read("ada", "personal", { window: true }),
    );
    await threads.append(fence, "personal", [input("two"), reply("b")]);
    inner.fullReads = 0;
    const window = await threads.readIfHeld("ada", "personal", "r1", { window: true });
    expect(window?.map((entry) => entry.kind === "input" && entry.text)).toEqual(["one", false, "two", false]);
    expect(window).toEqual(await inner.read("ada", "personal", { window: true }));
    expect(inner.fullReads).toBe(1); // only the comparison above
    expect(inner.tailReads).toBe(1);
  });

  it("sees what another runner appended meanwhile, compactions included", async () => {
    const threads = cached();
    const first = await threads.append(fence, "personal", [input("one"), reply("a"), input("two")]);
    await threads.read("ada", "personal", { window: true });
    // Another runner (writing straight to the store) takes the agent and compacts the thread.
    await lease.release(fence);
    const other = (await lease.acquire("ada", "r2", 60_000)) as Fence;
    await inner.append(other, "personal", [reply("b"), compaction(first[1]?.entryId ?? ""), input("three")]);
    const window = await threads.read("ada", "personal", { window: true });
    expect(window).toEqual(await inner.read("ada", "personal", { window: true }));
    expect(window.map((entry) => entry.kind)).toEqual(["input", "assistant", "compaction", "input"]);
    // Its lease is not this runner's: the read-ahead finds nothing, cached or not.
    expect(await threads.readIfHeld("ada", "personal", "r1", { window: true })).toBeNull();
  });

  it("moves a cached window's start when it appends a compaction itself", async () => {
    const threads = cached();
    const stored = await threads.append(fence, "personal", [input("one"), reply("a"), input("two"), reply("b")]);
    await threads.read("ada", "personal", { window: true });
    await threads.append(fence, "personal", [compaction(stored[1]?.entryId ?? "")]);
    expect(await threads.read("ada", "personal", { window: true })).toEqual(
      await inner.read("ada", "personal", { window: true }),
    );
    expect((await threads.read("ada", "personal", { window: true })).map((entry) => entry.kind)).toEqual([
      "input",
      "assistant",
      "compaction",
    ]);
  });

  it("reads a thread again in full when the entry its copy ends with is gone", async () => {
    const threads = cached();
    await threads.append(fence, "personal", [input("one"), reply("a")]);
    await threads.read("ada", "personal", { window: true });
    inner.drop("ada", "personal"); // an operator deleted the thread
    await inner.append(fence, "personal", [input("fresh")]);
    inner.fullReads = 0;
    const window = await threads.read("ada", "personal", { window: true });
    expect(window.map((entry) => entry.kind === "input" && entry.text)).toEqual(["fresh"]);
    expect(inner.fullReads).toBe(1);
  });

  it("holds only what the store returned: a run's own appends come back in the next tail", async () => {
    const threads = cached();
    await threads.append(fence, "personal", [input("one")]);
    await threads.read("ada", "personal", { window: true });
    const copy = threads.size.bytes;
    await threads.append(fence, "personal", [reply("a"), input("two")]);
    expect(threads.size.bytes).toBe(copy);
    // A failed append changes nothing either.
    await lease.release(fence);
    await expect(threads.append(fence, "personal", [input("late")])).rejects.toThrow();
    inner.fullReads = 0;
    expect((await threads.read("ada", "personal", { window: true })).map((entry) => entry.kind)).toEqual([
      "input",
      "assistant",
      "input",
    ]);
    expect(inner.fullReads).toBe(0);
    expect(threads.size.bytes).toBeGreaterThan(copy);
  });

  it("serves the newest entries of a thin thread from its copy while it holds enough", async () => {
    const threads = cached();
    for (let i = 0; i < 10; i++) await threads.append(fence, "personal", [input(`m${i}`), reply(`r${i}`)]);
    expect(await threads.read("ada", "personal", { last: true, limit: 6 })).toEqual(
      await inner.read("ada", "personal", { last: true, limit: 6 }),
    );
    await threads.append(fence, "personal", [input("m10")]);
    inner.fullReads = 0;
    expect(await threads.readIfHeld("ada", "personal", "r1", { last: true, limit: 4 })).toEqual(
      (await inner.read("ada", "personal")).slice(-4),
    );
    expect(inner.fullReads).toBe(1); // the comparison only
    // More than the copy holds: read in full, and kept for next time.
    expect(await threads.read("ada", "personal", { last: true, limit: 16 })).toEqual(
      (await inner.read("ada", "personal")).slice(-16),
    );
    expect(inner.fullReads).toBe(3);
    expect(await threads.read("ada", "personal", { last: true, limit: 16 })).toHaveLength(16);
    expect(inner.fullReads).toBe(3);
    // A copy that holds the whole thread answers any limit.
    expect(await threads.read("ada", "personal", { last: true, limit: 100 })).toHaveLength(21);
    expect(await threads.read("ada", "personal", { last: true, limit: 200 })).toHaveLength(21);
    expect(inner.fullReads).toBe(4);
  });

  it("hands out copies: changing a returned list changes nothing it returns later", async () => {
    const threads = cached();
    await threads.append(fence, "personal", [input("one")]);
    const first = await threads.read("ada", "personal", { window: true });
    first.push(first[0] as ThreadEntry);
    first.length = 0;
    expect(await threads.read("ada", "personal", { window: true })).toHaveLength(1);
  });

  it("keeps at most maxThreads threads and maxBytes bytes, dropping the least recently used", async () => {
    const threads = cached({ maxThreads: 2 });
    const bob = (await lease.acquire("bob", "r1", 60_000)) as Fence;
    const cy = (await lease.acquire("cy", "r1", 60_000)) as Fence;
    for (const f of [fence, bob, cy]) await threads.append(f, "personal", [input(`hi ${f.agent}`)]);
    await threads.read("ada", "personal", { window: true });
    await threads.read("bob", "personal", { window: true });
    await threads.read("ada", "personal", { window: true }); // ada used last
    await threads.read("cy", "personal", { window: true });
    expect(threads.size.threads).toBe(2);
    inner.fullReads = 0;
    await threads.read("ada", "personal", { window: true });
    expect(inner.fullReads).toBe(0);
    await threads.read("bob", "personal", { window: true });
    expect(inner.fullReads).toBe(1);

    const small = cached({ maxBytes: 1_000 });
    await small.read("ada", "personal", { window: true });
    expect(small.size.threads).toBe(1);
    await small.append(fence, "personal", [input("x".repeat(2_000))]);
    expect(await small.read("ada", "personal", { window: true })).toHaveLength(2);
    expect(small.size).toEqual({ threads: 0, bytes: 0 });
  });

  it("lets go of threads idle longer than idleMs", async () => {
    const threads = cached({ idleMs: 60_000 });
    await threads.append(fence, "personal", [input("one")]);
    await threads.read("ada", "personal", { window: true });
    clock.advance(30_000);
    await threads.read("ada", "personal", { window: true });
    clock.advance(59_000);
    threads.sweep();
    expect(threads.size.threads).toBe(1);
    clock.advance(2_000);
    threads.sweep();
    expect(threads.size).toEqual({ threads: 0, bytes: 0 });
    inner.fullReads = 0;
    await threads.read("ada", "personal", { window: true });
    expect(inner.fullReads).toBe(1);
  });

  it("keeps no copy of an empty thread (an agent that ran once keeps nothing)", async () => {
    const threads = cached();
    expect(await threads.readIfHeld("ada", "personal", "r1", { window: true })).toEqual([]);
    expect(await threads.read("ada", "personal", { last: true, limit: 8 })).toEqual([]);
    expect(threads.size).toEqual({ threads: 0, bytes: 0 });
  });

  it("caches nothing with maxThreads 0", async () => {
    const threads = cached({ maxThreads: 0 });
    await threads.append(fence, "personal", [input("one")]);
    await threads.read("ada", "personal", { window: true });
    await threads.read("ada", "personal", { window: true });
    expect(inner.fullReads).toBe(2);
    expect(threads.size.threads).toBe(0);
  });

  it("reads exactly what the store reads, through any mix of appends, other writers and compactions", async () => {
    // A seeded walk: this runner and "another" one append, compact and take the lease in turn.
    let seed = 7;
    const random = () => {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    const threads = cached({ maxThreads: 1 });
    const bob = (await lease.acquire("bob", "r1", 60_000)) as Fence;
    let current = fence;
    for (let step = 0; step < 400; step++) {
      const roll = random();
      if (roll < 0.35) {
        await threads.append(current, "personal", [input(`s${step}`), reply(`r${step}`)]);
      } else if (roll < 0.5) {
        await inner.append(current, "personal", [input(`o${step}`)]); // written by another runner (not through the cache)
      } else if (roll < 0.55) {
        const all = await inner.read("ada", "personal");
        const upTo = all[Math.floor(random() * all.length)]?.entryId;
        if (upTo) await (random() < 0.5 ? threads : inner).append(current, "personal", [compaction(upTo)]);
      } else if (roll < 0.6) {
        await lease.release(current);
        current = (await lease.acquire("ada", random() < 0.5 ? "r1" : "r2", 60_000)) as Fence;
      } else if (roll < 0.65) {
        await threads.read("bob", "personal", { window: true }); // evicts ada's copy (one thread kept)
        await threads.append(bob, "personal", [input(`b${step}`)]);
      } else if (roll < 0.8) {
        const limit = 1 + Math.floor(random() * 12);
        expect(await threads.read("ada", "personal", { last: true, limit })).toEqual(
          await inner.read("ada", "personal", { last: true, limit }),
        );
      } else {
        const holder = random() < 0.5 ? "r1" : "r2";
        expect(await threads.readIfHeld("ada", "personal", holder, { window: true })).toEqual(
          await inner.readIfHeld("ada", "personal", holder, { window: true }),
        );
      }
    }
    expect(inner.tailReads).toBeGreaterThan(50);
    // The byte count follows every change: once all is dropped, it is back at zero.
    clock.advance(DEFAULT_THREAD_CACHE.idleMs + 1);
    threads.sweep();
    expect(threads.size).toEqual({ threads: 0, bytes: 0 });
  });
});
