import { decode, outboundEnvelopeSchema, stamp } from "@moniro/envelopes";
import { jetstreamManager } from "@nats-io/jetstream";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { StreamPublishError, streamPublisher } from "./stream-publisher.js";
import { type ExecutorFixture, executorFixture } from "./test/executor-fixture.js";

describe("streamPublisher over real NATS", () => {
  let world: ExecutorFixture;

  beforeEach(async () => {
    world = await executorFixture();
  });
  afterEach(async () => {
    await world.cleanup();
  });

  it("resolves once the stream stored the envelope, with its id as Nats-Msg-Id (a second publish of it is dropped)", async () => {
    const publish = streamPublisher(world.nc);
    const envelope = { ...stamp(), agent: "ada", to: "http:alice", text: "hi", attachments: [] };
    await Promise.all([publish(world.subjects.out("http"), envelope), publish(world.subjects.out("http"), envelope)]);
    const jsm = await jetstreamManager(world.nc);
    const stored = await jsm.streams.getMessage(world.subjects.streams.out, {
      last_by_subj: world.subjects.out("http"),
    });
    expect(stored?.header.get("Nats-Msg-Id")).toBe(envelope.id);
    expect(decode(outboundEnvelopeSchema, stored?.data ?? new Uint8Array(), "outbound")).toMatchObject({
      ok: true,
      value: { id: envelope.id, text: "hi" },
    });
    expect((await jsm.streams.info(world.subjects.streams.out)).state.messages).toBe(1);
  });

  it("rejects when no stream stores the subject, so the tool does not report a message as queued", async () => {
    const publish = streamPublisher(world.nc);
    const outside = `nowhere-${stamp().id.toLowerCase()}.out.http`;
    await expect(publish(outside, { ...stamp(), text: "lost?" })).rejects.toThrow(StreamPublishError);
    await expect(publish(outside, { ...stamp(), text: "lost?" })).rejects.toThrow(/no JetStream stream stores/);
  });
});
