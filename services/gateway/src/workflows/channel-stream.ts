import type { EventEmitter } from "node:events";
import { type Channel, type ChannelItem, compareEntryIds, DEFAULT_READ_LIMIT } from "@moniro/store";
import { overflowFrame, type SseSink } from "../http/sse-fanout.js";
import { sseFrame } from "../http/sse-writer.js";
import { awaitTaken, CATCH_UP_STALL_MS } from "../http/stall-watch.js";
import type { ChannelWatch } from "./channel-feed.js";
import type { ChannelSseMetrics } from "./channel-metrics.js";
import type { UnreadableEntryReporter } from "./unreadable-entries.js";

const frame = (event: string, data: string, id?: string): Buffer =>
  Buffer.from(sseFrame({ event, data, ...(id !== undefined ? { id } : {}) }));

/**
 * An entry's SSE frame, encoded once however many clients follow its channel: the feed hands
 * every listener the same decoded entry object. A post is `event: post`; an entry that is not a
 * post it can decode is `event: unreadable` with its id as `id:`, so a client's reconnect resumes
 * after it instead of meeting it again (docs/api.md).
 */
const postFrames = new WeakMap<ChannelItem, Buffer>();
function postFrame(entry: ChannelItem): Buffer {
  let bytes = postFrames.get(entry);
  if (bytes === undefined) {
    bytes =
      "unreadable" in entry
        ? unreadableFrame(entry.id, entry.unreadable)
        : frame("post", JSON.stringify(entry), entry.id);
    postFrames.set(entry, bytes);
  }
  return bytes;
}

function unreadableFrame(id: string, reason: string): Buffer {
  const message = `entry ${id} of this channel is not a post that can be read (${reason}): it is skipped, the stream goes on after it`;
  return frame("unreadable", JSON.stringify({ error: { code: "corrupt_entry", message }, id }), id);
}

/**
 * One SSE client of a channel: every post after `after` (from the channel's
 * beginning without it), then each new post as the feed hears it, each sent
 * once, in order, with its id (the client's Last-Event-ID); an entry that
 * is not a post is sent as `event: unreadable` with its id, once, and the
 * stream goes on (`unreadable` is told of those the catch-up read finds,
 * the feed of the live ones). The feed is
 * joined before the posts so far are read, so none written meanwhile is
 * missed; what the feed hears during that read waits until it is done. A
 * failed read ends the stream with an `error` event; the client closing
 * stops it.
 *
 * A client never holds back the others: posts only queue in its own
 * response. The posts so far are written a page at a time, each once the
 * client has taken most of the one before; a client whose unsent bytes (and
 * the live posts held for it meanwhile) pass `maxBufferedBytes` is sent an
 * `overflow` event and disconnected, as the agent events stream does
 * (SseFanout): it reconnects with Last-Event-ID and gets every post since.
 * So is a client catching up that takes nothing of the page waiting for it
 * for `stallMs`: nothing may be posted to push it past the limit, and the
 * gateway would hold its bytes and the rest of the channel for it forever.
 */
export function streamChannel(options: {
  feed: ChannelWatch;
  channel: Channel;
  workflow: string;
  tag: string;
  after: string | undefined;
  sse: SseSink;
  /** The request: its `close` ends the stream. */
  request: EventEmitter;
  /** Bytes that may wait for this client before it is disconnected (MONIRO_GATEWAY_SSE_BUFFER). */
  maxBufferedBytes: number;
  /** How long a client catching up may take nothing before it is disconnected (30 s). */
  stallMs?: number;
  metrics?: ChannelSseMetrics;
  /** Told of each entry the catch-up read finds that is not a post it can decode (logged at warn). */
  unreadable?: UnreadableEntryReporter;
}): void {
  const { sse, maxBufferedBytes } = options;
  const stallMs = options.stallMs ?? CATCH_UP_STALL_MS;
  const stopping = new AbortController();
  let sent = options.after;
  let closed = false;
  let unwatch: (() => void) | undefined;
  /** What the feed delivered while the posts so far were being read (undefined once live). */
  let held: ChannelItem[] | undefined = [];
  let heldBytes = 0;

  const send = (entries: readonly ChannelItem[]) => {
    for (const entry of entries) {
      if (closed) return;
      if (sent !== undefined && compareEntryIds(entry.id, sent) <= 0) continue;
      sse.write({ bytes: postFrame(entry) });
      sent = entry.id;
    }
  };
  const resume = "reconnect with Last-Event-ID to get every post written since";
  const dropped = (final: Buffer) => {
    if (closed) return;
    stop();
    options.metrics?.slowClientDropped();
    sse.close(final);
  };
  const tooSlow = () => dropped(overflowFrame({ maxBufferedBytes, lastEventId: sent ?? null, resume }));
  const stalled = () =>
    dropped(overflowFrame({ maxBufferedBytes, lastEventId: sent ?? null, resume, stalledMs: stallMs }));
  const stop = () => {
    closed = true;
    stopping.abort();
    unwatch?.();
    unwatch = undefined;
  };
  const fail = (error: unknown) => {
    if (closed) return;
    stop();
    sse.close(frame("error", JSON.stringify({ message: (error as Error)?.message ?? String(error) })));
  };
  options.request.on("close", () => {
    stop();
    sse.close();
  });

  void (async () => {
    const stopWatching = await options.feed.watch(options.workflow, options.tag, {
      posts: (entries) => {
        if (held) {
          held.push(...entries);
          for (const entry of entries) heldBytes += postFrame(entry).byteLength;
          if (heldBytes + sse.buffered > maxBufferedBytes) tooSlow();
          return;
        }
        send(entries);
        if (sse.buffered > maxBufferedBytes) tooSlow();
      },
      failed: fail,
    });
    if (closed) {
      stopWatching();
      return;
    }
    unwatch = stopWatching;
    for (;;) {
      const page = await options.channel.scan(sent !== undefined ? { after: sent } : {});
      if (closed) return;
      for (const entry of page.entries)
        if ("unreadable" in entry) options.unreadable?.(options.workflow, options.tag, entry.id, entry.unreadable);
      send(page.entries);
      if (page.entries.length < DEFAULT_READ_LIMIT) break;
      // The next page once the client has taken most of this one (or the stream closed).
      if (sse.buffered > maxBufferedBytes / 2) {
        const buffered = () => sse.buffered;
        const taken = await awaitTaken({ drained: sse.drained(), buffered, stallMs, stopping: stopping.signal });
        if (taken === "stalled") return stalled();
      }
      if (closed) return;
    }
    const caughtUp = held;
    held = undefined;
    heldBytes = 0;
    send(caughtUp);
    if (sse.buffered > maxBufferedBytes) tooSlow();
  })().catch(fail);
}
