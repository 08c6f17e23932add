import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { openEventStream } from "@moniro/client";
import { createKeys, RedisWorkspaceStore } from "@moniro/store";
import { TEST_REDIS_URL } from "@moniro/store/test";
import { createLogger, type Logger } from "@moniro/telemetry";
import { Redis } from "ioredis";
import { afterEach, describe, expect, it } from "vitest";
import { AUTH, startTestGateway, type TestGateway } from "./test/gateway-fixture.js";
import { openEvents } from "./test/sse-client.js";
import { readToOverflow, stalledClient } from "./test/stalled-sse-client.js";

// docs/workflows.md "The channel over HTTP": GET …/channel/events pushes each post to every client of the channel.

const NOTES = "workspace: { persistent: true }\nagents:\n  alice: { ref: alice }\n";

describe("the channel's SSE stream", () => {
  const made: Array<{ cleanup(): Promise<void> }> = [];
  const dirs: string[] = [];
  afterEach(async () => {
    for (const item of made.splice(0).reverse()) await item.cleanup();
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  const gateway = async (env: Record<string, string> = {}, logger?: Logger) => {
    const dir = mkdtempSync(join(tmpdir(), "moniro-channel-events-"));
    dirs.push(dir);
    writeFileSync(join(dir, "notes.yaml"), NOTES);
    const g = await startTestGateway({ MONIRO_WORKFLOWS_DIR: dir, ...env }, logger ? { logger } : {});
    made.push(g);
    await g.gateway.connected;
    for (const tag of ["main", "other"]) {
      expect((await post(g, "/v1/workflows/notes/instances", { tag })).status).toBe(201);
    }
    return g;
  };
  const post = (g: TestGateway, path: string, body: unknown) =>
    g.fetch(path, { method: "POST", body: JSON.stringify(body), headers: { "content-type": "application/json" } });
  const say = async (g: TestGateway, tag: string, text: string): Promise<string> => {
    const response = await post(g, `/v1/workflows/notes/instances/${tag}/channel`, { from: "jane", text });
    expect(response.status).toBe(201);
    return ((await response.json()) as { id: string }).id;
  };
  const open = (g: TestGateway, tag: string, headers: Record<string, string> = {}, query = "") =>
    openEvents(`${g.base}/v1/workflows/notes/instances/${tag}/channel/events${query}`, {
      authorization: "Bearer key-two",
      ...headers,
    });
  const texts = (events: Array<{ event: string; data: string }>) =>
    events.filter((event) => event.event === "post").map((event) => (JSON.parse(event.data) as { text: string }).text);

  /** Every Redis command that names one of this gateway's channels, with the connection it came on. */
  const watchCommands = async (g: TestGateway) => {
    const keys = createKeys(g.redis.prefix);
    const channels = new Set(["main", "other"].map((tag) => keys.channel("notes", tag)));
    const seen: Array<{ command: string; source: string }> = [];
    const monitor = await new Redis(TEST_REDIS_URL).monitor();
    monitor.on("monitor", (_time: string, args: string[], source: string) => {
      if (args.some((arg) => channels.has(arg))) {
        seen.push({ command: String(args[0]).toLowerCase(), source });
      }
    });
    return { seen, stop: () => monitor.disconnect() };
  };

  it("pushes each post at once to every client of its channel, one read serving all, nothing read while idle", async () => {
    const g = await gateway();
    const main = await Promise.all([1, 2, 3, 4, 5].map(() => open(g, "main")));
    const other = await Promise.all([1, 2].map(() => open(g, "other")));
    await sleep(300); // every client past its first read

    const commands = await watchCommands(g);
    try {
      // Idle: 7 clients, and no command names their channels (polling read each one 10 times a second).
      await sleep(1_000);
      expect(commands.seen).toEqual([]);

      await say(g, "main", "first");
      await Promise.all(main.map((client) => client.waitFor((event) => event.event === "post")));
      await say(g, "other", "elsewhere");
      await Promise.all(other.map((client) => client.waitFor((event) => event.event === "post")));
      await sleep(200);
      for (const client of main) expect(texts(client.events)).toEqual(["first"]);
      for (const client of other) expect(texts(client.events)).toEqual(["elsewhere"]);
      // The reads that brought them: blocking reads on one connection, none per client.
      const reads = commands.seen.filter((seen) => seen.command.startsWith("xr"));
      expect(reads.every((read) => read.command === "xread")).toBe(true);
      expect(new Set(reads.map((read) => read.source)).size).toBe(1);
      expect(reads.length).toBeLessThanOrEqual(4);
    } finally {
      commands.stop();
      for (const client of [...main, ...other]) await client.close();
    }
  });

  it("resumes after Last-Event-ID: the posts missed, in order, each once, also while posts keep coming", async () => {
    const g = await gateway();
    const first = await open(g, "main");
    const ids = [await say(g, "main", "one"), await say(g, "main", "two")];
    await first.waitFor((event) => event.event === "post", 2);
    await first.close();
    for (let index = 0; index < 120; index++) ids.push(await say(g, "main", `gap ${index}`));

    // Reconnect after "two" while 30 more posts arrive: 120 missed (more than one page) and 30 live.
    const resumed = await open(g, "main", { "last-event-id": ids[1] ?? "" });
    for (let index = 0; index < 30; index++) ids.push(await say(g, "main", `live ${index}`));
    const got = await resumed.waitFor((event) => event.event === "post", 150);
    await sleep(200);
    expect(resumed.events.filter((event) => event.event === "post").map((event) => event.id)).toEqual(ids.slice(2));
    expect(got.at(-1)?.data).toContain("live 29");
    await resumed.close();

    // `?lastEventId=` is the same.
    const byQuery = await open(g, "main", {}, `?lastEventId=${ids.at(-2)}`);
    await byQuery.waitFor((event) => event.event === "post");
    await sleep(100);
    expect(texts(byQuery.events)).toEqual(["live 29"]);
    await byQuery.close();
  });

  it("resumes from the channel's end, with a gap event, when Last-Event-ID is past its last post (not one it sent), instead of holding back every post; refuses an id no stream id can be", async () => {
    const g = await gateway();
    const ids = [await say(g, "main", "one"), await say(g, "main", "two")];
    // Later than any post the channel will hold for a long time (year 5138): new posts must still arrive.
    const ahead = "99999999999999-0";
    const resumed = await open(g, "main", { "last-event-id": ahead });
    ids.push(await say(g, "main", "three"));
    const [three] = await resumed.waitFor((event) => event.event === "post");
    expect(three?.id).toBe(ids[2]);
    const gaps = resumed.events.filter((event) => event.event === "gap");
    expect(gaps).toHaveLength(1);
    expect(resumed.events.indexOf(gaps[0] as (typeof resumed.events)[number])).toBe(0);
    expect(JSON.parse(gaps[0]?.data ?? "{}")).toMatchObject({
      error: { code: "unknown_event_id", message: expect.stringContaining(ahead) },
      lastEventId: ahead,
      resumesAfter: ids[1],
    });
    await sleep(100);
    expect(texts(resumed.events)).toEqual(["three"]);
    await resumed.close();

    // An empty channel: from its first post.
    const empty = await open(g, "other", {}, `?lastEventId=${ahead}`);
    await say(g, "other", "first");
    await empty.waitFor((event) => event.event === "post");
    expect(JSON.parse(empty.events[0]?.data ?? "{}")).toMatchObject({ lastEventId: ahead, resumesAfter: "0-0" });
    expect(texts(empty.events)).toEqual(["first"]);
    await empty.close();

    // A number past a stream id's 64 bits is no id at all: 400, not a stream that fails in Redis on every reconnect.
    const huge = await g.fetch("/v1/workflows/notes/instances/main/channel/events", {
      headers: { "last-event-id": "99999999999999999999-0" },
    });
    expect(huge.status).toBe(400);
    expect(((await huge.json()) as { error: { code: string } }).error.code).toBe("invalid_query");
  });

  it("keeps serving the clients that stay when others disconnect, and a channel its clients all left", async () => {
    const g = await gateway();
    const [leaving, staying] = [await open(g, "main"), await open(g, "main")];
    const alone = await open(g, "other");
    await leaving.close();
    await alone.close();
    await say(g, "main", "after one left");
    await staying.waitFor((event) => event.event === "post");
    await say(g, "other", "nobody listening");
    const back = await open(g, "other");
    await back.waitFor((event) => event.event === "post");
    // The feed's read of "main" was under way: it is interrupted to take "other" in, not waited out (5 s).
    const started = performance.now();
    await say(g, "other", "someone again");
    await back.waitFor((event) => event.event === "post", 2);
    expect(performance.now() - started).toBeLessThan(1_000);
    expect(texts(back.events)).toEqual(["nobody listening", "someone again"]);
    expect(texts(staying.events)).toEqual(["after one left"]);
    expect(texts(leaving.events)).toEqual([]);
    await staying.close();
    await back.close();
  });

  it("disconnects a client that stops reading (overflow event, counted in /metrics) while another client of the channel gets every post; it resumes with Last-Event-ID", async () => {
    const g = await gateway({ MONIRO_GATEWAY_SSE_BUFFER: "256kb" });
    const path = "/v1/workflows/notes/instances/main/channel/events";
    const slow = await stalledClient(g.base, path, AUTH.authorization);
    const fast = await open(g, "main");
    await sleep(200); // both clients past reading the posts so far
    const channel = new RedisWorkspaceStore(g.redis.redis, { prefix: g.redis.prefix }).instance(
      "notes",
      "main",
    ).channel;
    const blob = "x".repeat(31_000); // a post is at most 32,000 characters
    const count = 500; // 15 MB: more than the kernel's socket buffers hold for the stalled client
    const isPost = (event: { event: string }) => event.event === "post";
    const ids: string[] = [];
    for (let n = 0; n < count; n++) {
      ids.push((await channel.post({ from: "http:jane", text: `${n} ${blob}` })).id);
      // Paced at what the reading client takes, the stalled one falls behind.
      if (n % 8 === 7) await fast.waitFor(isPost, n + 1, 30_000);
    }
    const posts = await fast.waitFor(isPost, count, 30_000);
    expect(posts.map((event) => event.id)).toEqual(ids);

    const { frames, overflow: body } = await readToOverflow(slow);
    expect(body.error).toMatchObject({ code: "client_too_slow", message: expect.stringMatching(/Last-Event-ID/) });
    // It got the posts before the overflow event in order, and not all of them; lastEventId is the last one's.
    const got = frames.filter((frame) => frame.includes("event: post")).map((frame) => /^id: (\S+)/.exec(frame)?.[1]);
    expect(got.length).toBeLessThan(count);
    expect(got).toEqual(ids.slice(0, got.length));
    expect(body.lastEventId).toBe(got.at(-1));

    const metrics = await (await g.fetch("/metrics")).text();
    /** A metric's value (its one series; the registry adds a `service` label). */
    const value = (name: string) => Number(new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, "m").exec(metrics)?.[1]);
    expect(value("moniro_gateway_channel_sse_slow_clients_dropped_total")).toBe(1);
    expect(value("moniro_gateway_channel_feed_channels")).toBe(1);
    expect(value("moniro_gateway_channel_feed_listeners")).toBe(1);
    expect(value("moniro_gateway_channel_feed_entries_delivered_total")).toBe(count);
    expect(value("moniro_gateway_channel_feed_reads_total")).toBeGreaterThan(0);
    expect(value("moniro_gateway_channel_feed_reconnects_total")).toBe(0);

    // Resuming from its lastEventId, it gets every post it missed.
    const resumed = await open(g, "main", { "last-event-id": body.lastEventId });
    const missed = await resumed.waitFor(isPost, count - got.length, 30_000);
    expect(missed.map((event) => event.id)).toEqual(ids.slice(got.length));
    await resumed.close();
    await fast.close();
  }, 60_000);

  it("reports an entry that is not a post once (event: unreadable, its id as id:) and goes on: every post reaches a client, each once, in order, reconnecting with Last-Event-ID included, and the gateway logs it at warn", async () => {
    const logs: Array<{ level: number; msg: string; entryId?: string; err?: string }> = [];
    const logger = createLogger({
      service: "gateway-test",
      level: "warn",
      destination: { write: (line: string) => logs.push(JSON.parse(line)) },
    });
    const g = await gateway({}, logger);
    const live = await open(g, "main");
    await sleep(200);
    const one = await say(g, "main", "one");
    // Written by something else (or an older version): its field does not parse as a post.
    const bad = await g.redis.redis.xadd(createKeys(g.redis.prefix).channel("notes", "main"), "*", "e", "not json");
    const two = await say(g, "main", "two");
    const expected = [
      { event: "post", id: one },
      { event: "unreadable", id: bad },
      { event: "post", id: two },
    ];
    const seen = (events: Array<{ event: string; id?: string | undefined }>) =>
      events.filter((event) => event.event !== "heartbeat").map(({ event, id }) => ({ event, id }));

    // Live: the client connected before all three.
    await live.waitFor((event) => event.event === "post", 2);
    expect(seen(live.events)).toEqual(expected);
    const unreadable = live.events.find((event) => event.event === "unreadable");
    expect(JSON.parse(unreadable?.data ?? "{}")).toEqual({
      error: { code: "corrupt_entry", message: expect.stringMatching(new RegExp(`^entry ${bad} .*not valid JSON`)) },
      id: bad,
    });

    // Catching up from the channel's start, and resuming after each id, as EventSource would.
    const fromStart = await open(g, "main");
    await fromStart.waitFor((event) => event.event === "post", 2);
    expect(seen(fromStart.events)).toEqual(expected);
    await fromStart.close();
    for (const [index, lastEventId] of [one, bad].entries()) {
      const resumed = await open(g, "main", { "last-event-id": lastEventId as string });
      await resumed.waitFor((event) => event.event === "post");
      await sleep(100);
      expect(seen(resumed.events)).toEqual(expected.slice(index + 1));
      await resumed.close();
    }

    // @moniro/client's events(), which reconnects with Last-Event-ID whenever its stream ends: each once, in order.
    const stop = new AbortController();
    const got: Array<{ event: string; id?: string | undefined }> = [];
    const reading = (async () => {
      const stream = openEventStream({
        url: `${g.base}/v1/workflows/notes/instances/main/channel/events`,
        headers: { authorization: "Bearer key-two" },
        retryMs: 50,
        signal: stop.signal,
      });
      for await (const event of stream) {
        got.push({ event: event.event, id: event.id });
        if (event.event === "post" && event.id === two) break;
      }
    })();
    await Promise.race([reading, sleep(5_000)]);
    stop.abort();
    await reading.catch(() => undefined);
    expect(got).toEqual(expected);

    // Nothing stopped: the live client gets what follows, and the entry was logged once at warn.
    const three = await say(g, "main", "three");
    await live.waitFor((event) => event.event === "post", 3);
    expect(seen(live.events)).toEqual([...expected, { event: "post", id: three }]);
    expect(live.events.filter((event) => event.event === "error")).toEqual([]);
    const warned = logs.filter((line) => line.entryId === bad);
    expect(warned).toEqual([expect.objectContaining({ level: 40, err: expect.stringContaining("not valid JSON") })]);
    await live.close();
  });

  it("ends only the stream of a channel whose key is broken, not those of the channels read with it", async () => {
    const g = await gateway();
    const [broken, fine] = [await open(g, "main"), await open(g, "other")];
    await sleep(200);
    const key = createKeys(g.redis.prefix).channel("notes", "main");
    await g.redis.redis.del(key);
    await g.redis.redis.set(key, "not a stream");
    await say(g, "other", "still here");
    const [error] = await broken.waitFor((event) => event.event === "error");
    expect(JSON.parse(error?.data ?? "{}").message).toMatch(/WRONGTYPE/);
    await fine.waitFor((event) => event.event === "post");
    await say(g, "other", "and here");
    await fine.waitFor((event) => event.event === "post", 2);
    expect(texts(fine.events)).toEqual(["still here", "and here"]);
    expect(fine.events.filter((event) => event.event === "error")).toEqual([]);
    await fine.close();
  });

  it("ends every client's stream when the gateway shuts down, without waiting for a read", async () => {
    const g = await gateway();
    const streams = await Promise.all(
      ["main", "other"].map(async (tag) => {
        const response = await g.fetch(`/v1/workflows/notes/instances/${tag}/channel/events`);
        const reader = (response.body as ReadableStream<Uint8Array>).getReader();
        // Read until the stream ends (or fails: a destroyed socket).
        const ended = (async () => {
          for (;;) if ((await reader.read().catch(() => ({ done: true }))).done) return performance.now();
        })();
        return { ended };
      }),
    );
    await sleep(200);
    const started = performance.now();
    await g.gateway.close();
    expect(performance.now() - started).toBeLessThan(2_000);
    for (const ended of await Promise.all(streams.map((stream) => stream.ended)))
      expect(ended - started).toBeLessThan(2_000);
  });
});
