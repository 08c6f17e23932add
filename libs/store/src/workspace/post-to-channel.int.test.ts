import type { InboundEnvelope } from "@moniro/envelopes";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type TestRedis, testRedis } from "../test/redis-fixture.js";
import { MentionsNotDeliveredError, postToChannel } from "./post-to-channel.js";
import { RedisWorkspaceStore } from "./redis-workspace-store.js";
import type { Workspace } from "./workspace-port.js";

// postToChannel over Redis: the post is stored, then each @mentioned member gets one immediate input.
describe("postToChannel", () => {
  let t: TestRedis;
  let review: Workspace;
  let published: InboundEnvelope[];
  const post = (from: string, text: string) =>
    postToChannel(
      {
        async publish(envelope) {
          published.push(envelope);
        },
        now: () => 1_732_600_000_000,
      },
      { instance: review, workflow: "review", tag: "pr-7" },
      { from, text },
    );

  beforeEach(async () => {
    t = testRedis();
    review = new RedisWorkspaceStore(t.redis, { prefix: t.prefix }).instance("review", "pr-7");
    await review.start([
      { name: "alice", agent: "alice", kind: "ref" },
      { name: "bob", agent: "bob", kind: "ref" },
      { name: "helper", agent: "review__pr-7__helper", kind: "inline" },
    ]);
    published = [];
  });
  afterEach(async () => {
    await t.cleanup();
  });

  it("pushes each mentioned member an immediate input with the workspace's source and context", async () => {
    const result = await post("alice", "@bob @helper check line 42");
    expect(result.mentions).toEqual(["bob", "helper"]);
    expect(published.map((input) => input.agent)).toEqual(["bob", "review__pr-7__helper"]);
    for (const input of published) {
      expect(input).toMatchObject({
        source: "ws:review:pr-7",
        replyTo: "ws:review:pr-7",
        context: "review:pr-7",
        priority: "immediate",
        text: "alice: @bob @helper check line 42",
        meta: { channelEntry: result.id, from: "alice" },
      });
    }
    expect(new Set(published.map((input) => input.id)).size).toBe(2);
  });

  it("a mention of a non-member is unreached, the post kept, the members still notified", async () => {
    const result = await post("http:carol", "@bob @mallory look");
    expect(result.unreached).toEqual(["mallory"]);
    expect(published.map((input) => [input.agent, input.text])).toEqual([["bob", "http:carol: @bob @mallory look"]]);
    expect((await review.channel.read()).entries.map((entry) => entry.text)).toEqual(["@bob @mallory look"]);
  });

  it("a post without a mention (or only of the sender) publishes nothing and is kept", async () => {
    await post("alice", "lunch at noon");
    await post("alice", "note to @alice");
    expect(published).toEqual([]);
    expect(await review.channel.length()).toBe(2);
  });

  it("a refused post publishes nothing", async () => {
    await expect(post("mallory", "@bob hi")).rejects.toMatchObject({ code: "not_a_member" });
    await review.stop();
    await expect(post("alice", "@bob hi")).rejects.toMatchObject({ code: "workflow_not_running" });
    expect(published).toEqual([]);
  });

  it("tries a mention whose input NATS did not store again, the same envelope; still failing, says the post is stored and whom it did not wake", async () => {
    const tries: Array<{ agent: string; id: string }> = [];
    let bobFails = 2;
    const deps = {
      async publish(envelope: InboundEnvelope) {
        tries.push({ agent: envelope.agent, id: envelope.id });
        if (envelope.agent === "bob" && bobFails-- > 0) throw new Error("JetStream did not store it");
        if (envelope.agent === "review__pr-7__helper" && tries.length > 0) throw new Error("NATS is away");
        published.push(envelope);
      },
      retryDelaysMs: [1, 1],
    };
    const failure = await postToChannel(
      deps,
      { instance: review, workflow: "review", tag: "pr-7" },
      {
        from: "alice",
        text: "@bob @helper ship it",
      },
    ).then(
      () => undefined,
      (error: unknown) => error,
    );
    // bob woke on the third try, with the envelope of the first (one input, whatever was stored).
    expect(published.map((input) => input.agent)).toEqual(["bob"]);
    const bobIds = new Set(tries.filter((one) => one.agent === "bob").map((one) => one.id));
    expect(tries.filter((one) => one.agent === "bob")).toHaveLength(3);
    expect(bobIds.size).toBe(1);
    expect(failure).toBeInstanceOf(MentionsNotDeliveredError);
    const stored = (await review.channel.read()).entries;
    expect(stored.map((entry) => entry.text)).toEqual(["@bob @helper ship it"]);
    expect((failure as Error).message).toBe(
      `the post is stored as ${stored[0]?.id} (do not post it again), but waking @helper failed: NATS is away; they see the post as unread when they next work in this workspace`,
    );
  });
});
