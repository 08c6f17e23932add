import { connectNats } from "@moniro/bus";
import type { ReadinessCheck as Check } from "@moniro/telemetry";
import type { NatsConnection } from "@nats-io/transport-node";
import type { Logger } from "./logger.js";
import { checkSignalCli } from "./signal-cli-check.js";
import type { SignalBridgeConfig } from "./signal-config.js";

export interface BridgeApp {
  checks: Record<string, Check>;
  metrics(): string;
  stop(): Promise<void>;
}

/**
 * The signal-bridge process: connected to NATS and, when MONIRO_SIGNAL_URL is
 * set, watching that the signal-cli daemon answers. Relaying Signal messages
 * (inbound DMs/groups, outbound `signal:*`, typing, allowlist) is not built
 * yet: the bridge consumes nothing, so no envelope waits on it.
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
      { signal: signalUrl },
      "Signal is configured; relaying messages is not implemented yet, so the bridge only checks signal-cli",
    );
  } else {
    logger.info({}, "Signal is disabled: MONIRO_SIGNAL_URL is not set");
  }

  const checks: Record<string, Check> = {
    nats: () => (natsUp && !nc.isClosed() ? true : "NATS disconnected"),
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
    metrics: () =>
      [
        "# HELP moniro_signal_bridge_enabled 1 when MONIRO_SIGNAL_URL is set.",
        "# TYPE moniro_signal_bridge_enabled gauge",
        `moniro_signal_bridge_enabled ${enabled}`,
        "",
      ].join("\n"),
    async stop() {
      await nc.drain().catch(() => {});
    },
  };
}
