import { Counter, Gauge, type Registry } from "@moniro/telemetry";

/** What the channel feed reports (docs/observability.md "Gateway"); `noChannelMetrics` when unmeasured. */
export interface ChannelFeedMetrics {
  /** The channels watched and their listeners (SSE clients) now. */
  watching(channels: number, listeners: number): void;
  /** A blocking read was sent. */
  read(): void;
  /** A reader's connection came back after it was lost. */
  reconnected(): void;
  /** Redis began (true) or stopped (false) refusing CLIENT UNBLOCK: reads block 250 ms meanwhile, not 5 s. */
  unblockRefused(refused: boolean): void;
  /** Posts read from one channel and handed to its listeners (each counted once, however many listen). */
  delivered(entries: number): void;
}

/** What the channel's SSE streams report. */
export interface ChannelSseMetrics {
  /** A client was disconnected for reading too slowly (its unsent bytes passed the limit, or it stalled catching up). */
  slowClientDropped(): void;
}

export type ChannelMetrics = ChannelFeedMetrics & ChannelSseMetrics;

export const noChannelMetrics: ChannelMetrics = {
  watching() {},
  read() {},
  reconnected() {},
  unblockRefused() {},
  delivered() {},
  slowClientDropped() {},
};

/** The feed's and the channel SSE's metrics, `moniro_gateway_channel_*`, registered in `registry`. */
export function channelMetrics(registry: Registry): ChannelMetrics {
  const registers = [registry];
  const channels = new Gauge({
    name: "moniro_gateway_channel_feed_channels",
    help: "Workspace channels the gateway's channel feed watches for SSE clients",
    registers,
  });
  const listeners = new Gauge({
    name: "moniro_gateway_channel_feed_listeners",
    help: "SSE clients following a workspace channel (listeners of the channel feed)",
    registers,
  });
  const reads = new Counter({
    name: "moniro_gateway_channel_feed_reads_total",
    help: "Blocking reads (XREAD) the channel feed sent",
    registers,
  });
  const reconnects = new Counter({
    name: "moniro_gateway_channel_feed_reconnects_total",
    help: "Times a channel feed connection came back after it was lost",
    registers,
  });
  const unblockRefused = new Gauge({
    name: "moniro_gateway_channel_feed_unblock_refused",
    help: "1 while Redis refuses the channel feed CLIENT UNBLOCK, so its reads block 250 ms instead of 5 s (asked again every 60 s and at reconnects), else 0",
    registers,
  });
  const delivered = new Counter({
    name: "moniro_gateway_channel_feed_entries_delivered_total",
    help: "Channel posts the feed read and handed to their channel's SSE clients (each once, however many clients)",
    registers,
  });
  const dropped = new Counter({
    name: "moniro_gateway_channel_sse_slow_clients_dropped_total",
    help: "Channel SSE clients disconnected for reading too slowly (more than MONIRO_GATEWAY_SSE_BUFFER unsent bytes, or nothing taken for 30 s while catching up)",
    registers,
  });
  return {
    watching(channelCount, listenerCount) {
      channels.set(channelCount);
      listeners.set(listenerCount);
    },
    read: () => reads.inc(),
    reconnected: () => reconnects.inc(),
    unblockRefused: (refused) => unblockRefused.set(refused ? 1 : 0),
    delivered: (entries) => delivered.inc(entries),
    slowClientDropped: () => dropped.inc(),
  };
}
