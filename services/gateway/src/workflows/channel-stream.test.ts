import { EventEmitter } from "node:events";
import { setTimeout as sleep } from "node:timers/promises";
import type { ChannelEntry } from "@moniro/envelopes";
import type { Channel } from "@moniro/store";
import { InMemoryWorkspaceStore } from "@moniro/store/test";
import { describe, expect, it } from "vitest";
import type { SseChunk, SseSink } from "../http/sse-fanout.js";
import type { ChannelListener, ChannelWatch } from "./channel-feed.js";
import { streamChannel } from "./channel-stream.js";

/** A response as the stream sees it: what was written, how much the client has not taken yet. */
class FakeSink implements SseSink {
  buffered = 0;
  readonly frames: string[] = [];
  final: string | undefined;
  closed = false;
  private waiting: Array<() => void> = [];

  write(chunk: SseChunk): void {
    this.frames.push(Buffer.from(chunk.bytes).toString("utf8"));
    this.buffered += chunk.bytes.byteLength;
  }
  drained(): Promise<void> {
    return this.closed ? Promise.resolve() : new Promise((resolve) => this.waiting.push(resolve));
  }
  /** The client took `bytes`, not all that waits for it. */
  take(bytes: number): void {
    this.buffered = Math.max(0, this.buffered - bytes);
  }
  /** The client took everything. */
  drain(): void {
    this.buffered = 0;
    for (const resolve of this.waiting.splice(0)) resolve();
  }
  close(final?: Uint8Array): void {
    this.closed = true;
    this.final = final && Buffer.from(final).toString("utf8");
    for (const resolve of this.waiting.splice(0)) resolve();
  }
  ids(): string[] {
    return this.frames.map((frame) => /^id: (\S+)/.exec(frame)?.[1] ?? frame);
  }
}

/** The feed, driven by the test: `hear` hands entries to every listener. */
class FakeFeed implements ChannelWatch {
  readonly listeners = new Set<ChannelListener>();
  async watch(_workflow: string, _tag: string, listener: ChannelListener): Promise<() => void> {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
  hear(entries: readonly ChannelEntry[]): void {
    for (const listener of [...this.listeners]) listener.posts(entries);
  }
}

const settle = async () => {
  for (let turn = 0; turn < 10; turn++) await new Promise((resolve) => setImmediate(resolve));
};

async function setup(options: { posts: number; text: string; maxBufferedBytes: number; stallMs?: number }) {
  const workspace = new InMemoryWorkspaceStore().instance("notes", "main");
  await workspace.start([{ name: "alice", agent: "alice", kind: "ref" }]);
  const channel: Channel = workspace.channel;
  for (let n = 0; n < options.posts; n++) await channel.post({ from: "http:jane", text: `${n} ${options.text}` });
  const before = (await channel.read({ limit: options.posts + 1 })).entries.map((entry) => entry.id);
  const feed = new FakeFeed();
  const sse = new FakeSink();
  let dropped = 0;
  streamChannel({
    feed,
    channel,
    workflow: "notes",
    tag: "main",
    after: undefined,
    sse,
    request: new EventEmitter(),
    maxBufferedBytes: options.maxBufferedBytes,
    ...(options.stallMs !== undefined ? { stallMs: options.stallMs } : {}),
    metrics: { slowClientDropped: () => dropped++ },
  });
  /** Posts a new entry and has the feed hand it out, as the real feed does once Redis has it. */
  const live = async (text: string) => {
    const { id } = await channel.post({ from: "http:jane", text });
    const entries = (await channel.read({ after: before.at(-1) })).entries.filter((entry) => entry.id === id);
    feed.hear(entries);
    return id;
  };
  return { feed, sse, before, live, dropped: () => dropped };
}

const overflow = (sse: FakeSink) => JSON.parse(sse.final?.replace(/^event: overflow\ndata: /, "") ?? "{}");

/**
 * A client dropped while its first page (100 posts) waited: the overflow event names the page's last
 * post, the stream stops following the channel, the drop is counted, and nothing more is written to it.
 */
async function expectDroppedAfterFirstPage(s: Awaited<ReturnType<typeof setup>>): Promise<void> {
  expect(overflow(s.sse)).toMatchObject({ error: { code: "client_too_slow" }, lastEventId: s.before[99] });
  expect(s.feed.listeners.size).toBe(0);
  expect(s.dropped()).toBe(1);
  s.sse.drain();
  await settle();
  expect(s.sse.frames).toHaveLength(100);
}

describe("a channel's SSE stream and a client that reads slowly", () => {
  it("disconnects a live client whose unsent bytes pass the limit, with an overflow event naming the last post written", async () => {
    const s = await setup({ posts: 0, text: "", maxBufferedBytes: 1_000 });
    await settle();
    const first = await s.live("a".repeat(600));
    expect(s.sse.closed).toBe(false);
    const second = await s.live("b".repeat(600));
    expect(s.sse.ids()).toEqual([first, second]);
    expect(s.sse.closed).toBe(true);
    expect(overflow(s.sse)).toMatchObject({ error: { code: "client_too_slow" }, lastEventId: second });
    expect(overflow(s.sse).error.message).toMatch(/more than 1000 bytes.*Last-Event-ID/);
    expect(s.feed.listeners.size).toBe(0);
    expect(s.dropped()).toBe(1);
  });

  it("keeps a client that takes what it is sent, however much passes through", async () => {
    const s = await setup({ posts: 0, text: "", maxBufferedBytes: 1_000 });
    await settle();
    const ids: string[] = [];
    for (let n = 0; n < 20; n++) {
      ids.push(await s.live("c".repeat(600)));
      s.sse.drain();
    }
    expect(s.sse.ids()).toEqual(ids);
    expect(s.sse.closed).toBe(false);
    expect(s.dropped()).toBe(0);
  });

  it("writes the posts so far a page at a time, the next once the client took most of the last; live posts wait meanwhile", async () => {
    const s = await setup({ posts: 150, text: "x".repeat(100), maxBufferedBytes: 30_000 });
    await settle();
    // The first page (100 posts, ~20 KB) is more than half the limit: the second waits for the client.
    expect(s.sse.ids()).toEqual(s.before.slice(0, 100));
    const meanwhile = await s.live("live");
    expect(s.sse.frames).toHaveLength(100);
    s.sse.drain();
    await settle();
    expect(s.sse.ids()).toEqual([...s.before, meanwhile]);
    expect(s.sse.closed).toBe(false);
  });

  it("disconnects a client catching up that does not read while the live posts held for it pass the limit", async () => {
    const s = await setup({ posts: 150, text: "x".repeat(100), maxBufferedBytes: 30_000 });
    await settle();
    expect(s.sse.frames).toHaveLength(100);
    await s.live("y".repeat(1_000));
    expect(s.sse.closed).toBe(false);
    await s.live("z".repeat(10_000));
    expect(s.sse.closed).toBe(true);
    await expectDroppedAfterFirstPage(s);
  });

  it("disconnects a client catching up that takes nothing for stallMs while nobody posts, with an overflow event naming the last post written", async () => {
    const s = await setup({ posts: 150, text: "x".repeat(100), maxBufferedBytes: 30_000, stallMs: 100 });
    await settle();
    expect(s.sse.frames).toHaveLength(100);
    expect(s.sse.closed).toBe(false);
    await expect.poll(() => s.sse.closed, { timeout: 1_000, interval: 10 }).toBe(true);
    expect(overflow(s.sse).error.message).toMatch(
      /^this client took none of the events waiting for it for 0.1 s while it caught up.*Last-Event-ID/,
    );
    await expectDroppedAfterFirstPage(s);
  });

  it("waits for a client catching up that takes a little within each stallMs, however long it takes", async () => {
    const s = await setup({ posts: 150, text: "x".repeat(100), maxBufferedBytes: 30_000, stallMs: 200 });
    await settle();
    expect(s.sse.frames).toHaveLength(100);
    for (let step = 0; step < 12; step++) {
      await sleep(50);
      s.sse.take(500);
    }
    expect(s.sse.closed).toBe(false);
    s.sse.drain();
    await settle();
    expect(s.sse.ids()).toEqual(s.before);
    expect(s.sse.closed).toBe(false);
    expect(s.dropped()).toBe(0);
  });
});
