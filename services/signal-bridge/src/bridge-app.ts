import { connectNats, outboundBacklog, redactUrlCredentials } from "@moniro/bus";
import { createSubjects } from "@moniro/envelopes";
import type { ReadinessCheck as Check } from "@moniro/telemetry";
import type { NatsConnection } from "@nats-io/transport-node";
import type { Logger } from "./logger.js";
import { checkSignalCli } from "./signal-cli-check.js";
import type { SignalBridgeConfig } from "./signal-config.js";

export interface BridgeApp {
  checks: Record<string, Check>;
  metrics(): Promise<string>;
  stop(): Promise<void>;
}

/**
 * The signal-bridge process: connected to NATS and, when MONIRO_SIGNAL_URL is
 * set, watching that the signal-cli daemon answers. Relaying Signal messages
 * (inbound DMs/groups, outbound `signal:*`, typing, allowlist) is not built
 * yet: the bridge consumes nothing and makes no `outbound-signal` consumer,
 * so the `message` tool refuses `signal:` targets. Should such a consumer
 * exist (made by hand, or by a bridge version that relays) with messages
 * waiting and nobody pulling, the `outbound` check fails and
 * `moniro_outbound_pending{channel="signal"}` shows how many wait.
 */
export async function startBridge(
  config: SignalBridgeConfig,
  logger: Logger,
  options: { signal?: AbortSignal; fetch?: typeof fetch } = {},
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

  const signalUrl = config.MONIRO_SIGNAL_URL;
  if (signalUrl) {
    logger.info(
      { signal: redactUrlCredentials(signalUrl) },
      "Signal is configured; relaying messages is not implemented yet, so the bridge only checks signal-cli",
    );
  } else {
    logger.info({}, "Signal is disabled: MONIRO_SIGNAL_URL is not set");
  }

  const subjects = createSubjects(config.MONIRO_NAMESPACE);
  const backlog = () => outboundBacklog(nc, subjects, "signal");
  const checks: Record<string, Check> = {
    nats: () => (natsUp && !nc.isClosed() ? true : "NATS disconnected"),
    outbound: async () => {
      const waiting = await backlog();
      if (!waiting?.stalled) return true;
      return `${waiting.pending} outbound signal message(s) wait on ${subjects.streams.out} and no bridge pulls them`;
    },
  };
  if (signalUrl) {
    checks.signal = async () => {
      const result = await checkSignalCli(signalUrl, options.fetch);
      return result.ok ? true : result.reason;
    };
  }
  const enabled = signalUrl ? 1 : 0;
  return {
    checks,
    async metrics() {
      const waiting = await backlog().catch(() => undefined);
      return [
        "# HELP moniro_signal_bridge_enabled 1 when MONIRO_SIGNAL_URL is set.",
        "# TYPE moniro_signal_bridge_enabled gauge",
        `moniro_signal_bridge_enabled ${enabled}`,
        "# HELP moniro_outbound_pending Outbound signal messages waiting on MONIRO_OUT for this bridge (0 without its consumer).",
        "# TYPE moniro_outbound_pending gauge",
        `moniro_outbound_pending{channel="signal"} ${waiting?.pending ?? 0}`,
        "",
      ].join("\n");
    },
    async stop() {
      await nc.drain().catch(() => {});
    },
  };
}
