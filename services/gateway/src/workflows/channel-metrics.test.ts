import { createMetricsRegistry } from "@moniro/telemetry";
import { describe, expect, it } from "vitest";
import { channelMetrics } from "./channel-metrics.js";

describe("the channel feed's metrics", () => {
  it("are registered under moniro_gateway_channel_* and move with what they count", async () => {
    const registry = createMetricsRegistry("gateway-test");
    const metrics = channelMetrics(registry);
    metrics.watching(3, 7);
    metrics.read();
    metrics.read();
    metrics.reconnected();
    metrics.unblockRefused(true);
    metrics.delivered(5);
    metrics.slowClientDropped();
    const values = new Map(
      (await registry.getMetricsAsJSON())
        .filter((metric) => metric.name.startsWith("moniro_gateway_channel_"))
        .map((metric) => [metric.name, metric.values[0]?.value]),
    );
    expect(Object.fromEntries(values)).toEqual({
      moniro_gateway_channel_feed_channels: 3,
      moniro_gateway_channel_feed_listeners: 7,
      moniro_gateway_channel_feed_reads_total: 2,
      moniro_gateway_channel_feed_reconnects_total: 1,
      moniro_gateway_channel_feed_unblock_refused: 1,
      moniro_gateway_channel_feed_entries_delivered_total: 5,
      moniro_gateway_channel_sse_slow_clients_dropped_total: 1,
    });
  });
});
