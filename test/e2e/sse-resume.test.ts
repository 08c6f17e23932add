import { openEventStream, type SseEvent } from "@moniro/client";
import { createSubjects, type OutboundEnvelopeInput, stamp } from "@moniro/envelopes";
import { RedisWorkspaceStore } from "@moniro/store";
import { testClient } from "@moniro/store/test";
import { jetstream } from "@nats-io/jetstream";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { afterEach, describe, expect, it } from "vitest";
import { testAgentYaml } from "../support/agents.js";
import { eventually } from "../support/eventually.js";
import { NATS_URL, printServiceLogsOnFailure, type Stack, startStack } from "../support/stack.js";

// docs/api.md "Watch an agent" and docs/workflows.md "The channel over HTTP": a client that reconnects with
// Last-Event-ID (as EventSource and @moniro/client do) gets every message / post stored meanwhile, each once, in
// order, also across a gateway killed and started again.

describe("SSE clients across a gateway restart", () => {
  let stack: Stack | undefined;
  let nc: NatsConnection | undefined;
  const aborts: AbortController[] = [];
  printServiceLogsOnFailure(() => stack);
  afterEach(async () => {
    for (const abort of aborts.splice(0)) abort.abort();
    await nc?.drain();
    nc = undefined;
    await stack?.stop();
    stack = undefined;
  });

  /** Follows an SSE route with @moniro/client's reconnecting reader, collecting what it yields. */
  const follow = (url: string) => {
    const abort = new AbortController();
    aborts.push(abort);
    const events: SseEvent[] = [];
    const reconnects: Array<string | undefined> = [];
    let open: () => void = () => {};
    const opened = new Promise<void>((resolve) => {
      open = resolve;
    });
    void (async () => {
      for await (const event of openEventStream({
        url,
        signal: abort.signal,
        retryMs: 100,
        maxRetryMs: 200,
        onOpen: () => open(),
        onReconnect: ({ lastEventId }) => reconnects.push(lastEventId),
      })) {
        events.push(event);
      }
    })().catch(() => undefined);
    return { events, reconnects, opened };
  };
  const textsOf = (events: SseEvent[], name: string) =>
    events.filter((event) => event.event === name).map((event) => (JSON.parse(event.data) as { text: string }).text);

  it("a client of an agent's events and one of a channel, both connected while the gateway is SIGKILLed and started again, reconnect with Last-Event-ID and get every message and post written meanwhile, each once, in order", async () => {
    stack = await startStack({
      services: ["gateway"],
      agents: { alice: testAgentYaml("alice") },
      workflows: { notes: "workspace: { persistent: true }\nagents:\n  alice: { ref: alice }\n" },
    });
    const running = stack;
    const subjects = createSubjects(running.namespace);
    nc = await connect({ servers: NATS_URL });
    const js = jetstream(nc);
    const say = async (text: string) => {
      const envelope: OutboundEnvelopeInput = { ...stamp(), agent: "alice", to: "http:carol", text };
      return (await js.publish(subjects.out("http"), JSON.stringify(envelope))).seq;
    };
    const started = await fetch(`${running.gatewayUrl}/v1/workflows/notes/instances`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ tag: "main" }),
    });
    expect(started.status).toBe(201);
    const redis = testClient(running.redis.url);
    const channel = new RedisWorkspaceStore(redis, { prefix: running.prefix }).instance("notes", "main").channel;
    const post = async (text: string) => (await channel.post({ from: "http:jane", text })).id;

    const port = running.service("gateway").port;
    const base = running.gatewayUrl;
    const agent = follow(`${base}/v1/agents/alice/events`);
    const posts = follow(`${base}/v1/workflows/notes/instances/main/channel/events`);
    await Promise.all([agent.opened, posts.opened]);
    const seqs = [await say("m1")];
    const ids = [await post("p1")];
    await eventually(() => {
      expect(textsOf(agent.events, "message")).toEqual(["m1"]);
      expect(textsOf(posts.events, "post")).toEqual(["p1"]);
      return true;
    }, "m1 and p1 before the restart");

    expect(await running.kill(running.service("gateway"), "SIGKILL")).toBeNull();
    seqs.push(await say("m2 (gateway down)"), await say("m3 (gateway down)"));
    ids.push(await post("p2 (gateway down)"));
    await running.start("gateway", { MONIRO_HTTP_PORT: String(port) }, { ownDefaultPort: port });
    seqs.push(await say("m4 (after)"));
    ids.push(await post("p3 (after)"));

    await eventually(() => {
      expect(textsOf(agent.events, "message")).toEqual(["m1", "m2 (gateway down)", "m3 (gateway down)", "m4 (after)"]);
      expect(textsOf(posts.events, "post")).toEqual(["p1", "p2 (gateway down)", "p3 (after)"]);
      return true;
    }, "every message and post after the restart");
    expect(agent.events.filter((event) => event.event === "message").map((event) => event.id)).toEqual(
      seqs.map(String),
    );
    expect(posts.events.filter((event) => event.event === "post").map((event) => event.id)).toEqual(ids);
    // Each reconnected with the id of the last one it had; no gap: nothing it was promised is gone.
    expect(agent.reconnects.at(0)).toBe(String(seqs[0]));
    expect(posts.reconnects.at(0)).toBe(ids[0]);
    expect([...agent.events, ...posts.events].filter((event) => event.event === "gap")).toEqual([]);
    redis.disconnect();
  }, 60_000);
});
