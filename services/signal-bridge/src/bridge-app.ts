import type { EnvelopeConsumer } from "@moniro/bus";
import { connectNats, ensureStreams, outboundBacklog } from "@moniro/bus";
import { createSubjects, decode, eventEnvelopeSchema } from "@moniro/envelopes";
import type { ReadinessCheck as Check } from "@moniro/telemetry";
import { jetstream } from "@nats-io/jetstream";
import type { NatsConnection, Subscription } from "@nats-io/transport-node";
import { type EventStream, followEvents } from "./event-stream.js";
import type { Logger } from "./logger.js";
import { consumeOutbound, type OutboundCounters } from "./outbound.js";
import { answerPairing } from "./pairing-responder.js";
import { kvPairingStore } from "./pairing-store.js";
import { createRelay, type RelayCounters } from "./relay.js";
import type { Routing } from "./routing.js";
import type { SignalBridgeConfig } from "./signal-config.js";
import { signalRpc } from "./signal-rpc.js";
import { TypingIndicators } from "./typing.js";

export interface BridgeApp {
  checks: Record<string, Check>;
  metrics(): Promise<string>;
  stop(): Promise<void>;
}

interface Relaying {
  events: EventStream;
  inbound: RelayCounters;
  outbound: OutboundCounters;
  stop(): Promise<void>;
}

/**
 * The signal-bridge process: connected to NATS and, when MONIRO_SIGNAL_URL is
 * set, relaying Signal through that signal-cli daemon (docs/signal.md):
 * its SSE events become inbound envelopes, `<ns>.out.signal` is sent with
 * `send`, typing follows the agents' cycles, and pairing requests are
 * answered on `<ns>.signal.pairing`. Without MONIRO_SIGNAL_URL it relays
 * nothing and creates no `outbound-signal` consumer, so the `message` tool
 * refuses `signal:` targets.
 */
export async function startBridge(
  config: SignalBridgeConfig,
  logger: Logger,
  options: { signal?: AbortSignal; fetch?: typeof fetch; routing?: Routing | undefined } = {},
): Promise<BridgeApp> {
  const nc: NatsConnection = await connectNats(config, {
    name: "signal-bridge",
    logger,
    ...(options.signal ? { signal: options.signal } : {}),
  });
  let natsUp = true;
  void (async () => {
    for await (const status of nc.status()) {
      if (status.type === "disconnect") natsUp = false;
      if (status.type === "reconnect") natsUp = true;
    }
  })();

  const subjects = createSubjects(config.MONIRO_NAMESPACE);
  const signalUrl = config.MONIRO_SIGNAL_URL;
  let relaying: Relaying | undefined;
  if (signalUrl && options.routing) {
    relaying = await startRelaying(nc, config, signalUrl, options.routing, logger, options.fetch);
  } else {
    logger.info({}, "Signal is disabled: MONIRO_SIGNAL_URL is not set");
  }

  const backlog = () => outboundBacklog(nc, subjects, "signal");
  const checks: Record<string, Check> = {
    nats: () => (natsUp && !nc.isClosed() ? true : "NATS disconnected"),
    outbound: async () => {
      const waiting = await backlog();
      if (!waiting?.stalled) return true;
      return `${waiting.pending} outbound signal message(s) wait on ${subjects.streams.out} and no bridge pulls them`;
    },
  };
  if (relaying) {
    const events = relaying.events;
    checks.signal = () => {
      const status = events.status();
      return status.connected ? true : `signal-cli event stream not connected: ${status.lastError ?? "connecting"}`;
    };
  }
  return {
    checks,
    async metrics() {
      const waiting = await backlog().catch(() => undefined);
      return [
        "# HELP moniro_signal_bridge_enabled 1 when MONIRO_SIGNAL_URL is set.",
        "# TYPE moniro_signal_bridge_enabled gauge",
        `moniro_signal_bridge_enabled ${relaying ? 1 : 0}`,
        "# HELP moniro_outbound_pending Outbound signal messages waiting on MONIRO_OUT for this bridge (0 without its consumer).",
        "# TYPE moniro_outbound_pending gauge",
        `moniro_outbound_pending{channel="signal"} ${waiting?.pending ?? 0}`,
        ...(relaying ? relayMetrics(relaying) : []),
        "",
      ].join("\n");
    },
    async stop() {
      await relaying?.stop();
      await nc.drain().catch(() => {});
    },
  };
}

function relayMetrics(relaying: Relaying): string[] {
  const status = relaying.events.status();
  const age = status.lastActivityAt === undefined ? -1 : (Date.now() - status.lastActivityAt) / 1000;
  const { inbound, outbound } = relaying;
  return [
    "# HELP moniro_signal_events_connected 1 while the signal-cli event stream is open.",
    "# TYPE moniro_signal_events_connected gauge",
    `moniro_signal_events_connected ${status.connected ? 1 : 0}`,
    "# HELP moniro_signal_events_reconnects_total Event stream connections opened after the first.",
    "# TYPE moniro_signal_events_reconnects_total counter",
    `moniro_signal_events_reconnects_total ${status.reconnects}`,
    "# HELP moniro_signal_events_stalls_total Event stream connections replaced because they went silent.",
    "# TYPE moniro_signal_events_stalls_total counter",
    `moniro_signal_events_stalls_total ${status.stalls}`,
    "# HELP moniro_signal_events_last_activity_age_seconds Seconds since the last event or keep-alive (-1: none yet).",
    "# TYPE moniro_signal_events_last_activity_age_seconds gauge",
    `moniro_signal_events_last_activity_age_seconds ${age.toFixed(3)}`,
    "# HELP moniro_signal_inbound_total Signal messages by what the bridge did with them.",
    "# TYPE moniro_signal_inbound_total counter",
    `moniro_signal_inbound_total{result="relayed"} ${inbound.relayed}`,
    `moniro_signal_inbound_total{result="held"} ${inbound.held}`,
    `moniro_signal_inbound_total{result="ignored"} ${inbound.ignored}`,
    `moniro_signal_inbound_total{result="duplicate"} ${inbound.duplicates}`,
    "# HELP moniro_signal_outbound_total Outbound Signal deliveries by outcome.",
    "# TYPE moniro_signal_outbound_total counter",
    `moniro_signal_outbound_total{result="sent"} ${outbound.sent}`,
    `moniro_signal_outbound_total{result="retried"} ${outbound.retried}`,
    `moniro_signal_outbound_total{result="dlq"} ${outbound.deadLettered}`,
  ];
}

async function startRelaying(
  nc: NatsConnection,
  config: SignalBridgeConfig,
  signalUrl: string,
  routing: Routing,
  logger: Logger,
  fetchImpl: typeof fetch | undefined,
): Promise<Relaying> {
  const subjects = createSubjects(config.MONIRO_NAMESPACE);
  await ensureStreams(nc, subjects);
  const js = jetstream(nc);
  const rpc = signalRpc({
    baseUrl: signalUrl,
    account: config.MONIRO_SIGNAL_ACCOUNT,
    ...(fetchImpl ? { fetch: fetchImpl } : {}),
  });
  const store = await kvPairingStore(nc, config.MONIRO_NAMESPACE);
  const typing = new TypingIndicators({ rpc, logger, readReceipts: routing.readReceipts });
  const stopping = new AbortController();

  const agentEvents: Subscription[] = [];
  for (const type of ["input-injected", "message-sent", "cycle-ended"] as const) {
    agentEvents.push(
      nc.subscribe(`${subjects.namespace}.evt.*.${type}`, {
        callback: (error, msg) => {
          if (error) return;
          const decoded = decode(eventEnvelopeSchema, msg.data, "event");
          if (!decoded.ok) return;
          const event = decoded.value;
          if (event.type === "cycle-ended") typing.cycleEnded(event.agent);
          else if (event.type === "message-sent") {
            if (typeof event.data.to === "string") typing.messageSent(event.agent, event.data.to);
          } else if (typeof event.data.envelopeId === "string") typing.injected(event.agent, event.data.envelopeId);
        },
      }),
    );
  }
  const pairing = answerPairing({ nc, subjects, store, rpc, logger });
  const outbound = consumeOutbound({
    js,
    subjects,
    rpc,
    logger,
    attempts: config.MONIRO_SIGNAL_SEND_ATTEMPTS,
    retryBaseMs: config.MONIRO_SIGNAL_RETRY_BASE_MS,
    handled: (envelope) => typing.replyHandled(envelope.agent, envelope.to),
  });
  const consumer: EnvelopeConsumer = await outbound.started;
  const relay = createRelay({
    js,
    subjects,
    routing,
    pairing: store,
    rpc,
    typing,
    logger,
    signal: stopping.signal,
    shutdownGraceMs: config.MONIRO_SHUTDOWN_GRACE_MS,
  });
  const eventsUrl = new URL("/api/v1/events", signalUrl);
  if (config.MONIRO_SIGNAL_ACCOUNT) eventsUrl.searchParams.set("account", config.MONIRO_SIGNAL_ACCOUNT);
  const events = followEvents({
    url: eventsUrl.toString(),
    onEvent: (data) => relay.onEvent(data),
    onUnhandled: (data, error) => relay.notRelayed(data, error),
    stallMs: config.MONIRO_SIGNAL_STALL_MS,
    shutdownGraceMs: config.MONIRO_SHUTDOWN_GRACE_MS,
    logger,
    ...(fetchImpl ? { fetch: fetchImpl } : {}),
  });
  logger.info(
    {
      defaultAgent: routing.defaultAgent,
      groups: routing.groups.size,
      allowed: routing.allow.size,
      pairing: routing.pairing,
    },
    "relaying Signal",
  );
  return {
    events,
    inbound: relay.counters,
    outbound: outbound.counters,
    async stop() {
      stopping.abort(new Error("bridge stopping"));
      await events.stop();
      await consumer.stop();
      pairing.unsubscribe();
      for (const sub of agentEvents) sub.unsubscribe();
      typing.stop();
    },
  };
}
