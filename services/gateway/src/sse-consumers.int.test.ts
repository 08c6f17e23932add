import { describe, expect, it } from "vitest";
import { SSE_CONSUMER_INACTIVE_MS } from "./nats/agent-stream-source.js";
import { AUTH, type TestGateway, useTestGateway } from "./test/gateway-fixture.js";
import { openEvents } from "./test/sse-client.js";
import { consumerCount, consumerCountSettled } from "./test/stream-consumers.js";

describe("SSE consumers go away with their connection", () => {
  let t: TestGateway;
  useTestGateway((started) => {
    t = started;
  });

  it("one consumer per gateway however many connections are open, short-lived if the gateway cannot delete it", async () => {
    const first = await openEvents(`${t.base}/v1/agents/alice/events`, AUTH);
    const more = [
      await openEvents(`${t.base}/v1/agents/alice/events`, AUTH),
      await openEvents(`${t.base}/v1/agents/bob/events`, AUTH),
    ];
    expect(await consumerCount(t.jsm, t.subjects.streams.out)).toBe(1);
    for await (const info of t.jsm.consumers.list(t.subjects.streams.out)) {
      expect(info.config.inactive_threshold).toBe(SSE_CONSUMER_INACTIVE_MS * 1_000_000);
      expect(info.config.durable_name).toBeUndefined();
    }
    await first.close();
    for (const sse of more) await sse.close();
    expect(await consumerCountSettled(t.jsm, t.subjects.streams.out, 0)).toBe(0);
  });

  it("500 SSE open/close cycles leave 0 consumers on MONIRO_OUT", async () => {
    for (let cycle = 0; cycle < 500; cycle++) {
      const sse = await openEvents(`${t.base}/v1/agents/${cycle % 2 ? "alice" : "bob"}/events`, AUTH);
      await sse.close();
    }
    expect(await consumerCountSettled(t.jsm, t.subjects.streams.out, 0)).toBe(0);
  }, 120_000);
});
