import { outboundConsumerName } from "@moniro/bus";
import { AckPolicy } from "@nats-io/jetstream";
import { describe, expect, it } from "vitest";
import { type TestGateway, useTestGateway } from "./test/gateway-fixture.js";

describe("GET /metrics: what waits for a stopped bridge", () => {
  let t: TestGateway;
  useTestGateway((started) => {
    t = started;
  });

  it("reports moniro_outbound_pending and moniro_outbound_stalled per bridge channel", async () => {
    const metrics = async () => (await t.fetch("/metrics")).text();
    expect(await metrics()).not.toMatch(/moniro_outbound_pending\{/);

    // A signal bridge that made its consumer and then stopped: messages pile up, nobody pulls.
    await t.jsm.consumers.add(t.subjects.streams.out, {
      durable_name: outboundConsumerName("signal"),
      filter_subject: t.subjects.out("signal"),
      ack_policy: AckPolicy.Explicit,
    });
    for (const text of ["one", "two"]) await t.js.publish(t.subjects.out("signal"), text);
    await t.js.publish(t.subjects.out("http"), "read by SSE clients, not a bridge");

    const text = await metrics();
    expect(text).toMatch(/^moniro_outbound_pending\{channel="signal"[^}]*\} 2$/m);
    expect(text).toMatch(/^moniro_outbound_stalled\{channel="signal"[^}]*\} 1$/m);
    expect(text).not.toContain('channel="http"');
  });
});
