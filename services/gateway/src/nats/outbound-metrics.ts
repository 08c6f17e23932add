import { outboundBacklogs } from "@moniro/bus";
import type { Subjects } from "@moniro/envelopes";
import { Gauge, type Registry } from "@moniro/telemetry";
import type { GatewayLogger } from "../ports.js";
import { type NatsLink, NatsNotConnectedError } from "./nats-link.js";

/**
 * `moniro_outbound_pending{channel}` and `moniro_outbound_stalled{channel}`:
 * what waits on MONIRO_OUT for each bridge (its durable consumer
 * `outbound-<channel>`), read at every scrape. The gateway reports them
 * because it still answers when a bridge is stopped; its own /readyz does
 * not fail for another service's backlog (that would take the HTTP API out
 * of its load balancer for a problem it cannot fix).
 */
export function registerOutboundMetrics(options: {
  registry: Registry;
  link: NatsLink;
  subjects: Subjects;
  logger: GatewayLogger;
}): void {
  const { link, subjects, logger } = options;
  let backlogs: Promise<Awaited<ReturnType<typeof outboundBacklogs>>> | undefined;
  // Both gauges are collected in one scrape: one look-up serves them.
  const read = () => {
    backlogs ??= (async () => {
      try {
        return await outboundBacklogs(link.get().jsm, subjects);
      } catch (error) {
        if (error instanceof NatsNotConnectedError) return [];
        logger.warn({ err: (error as Error).message }, "cannot read the bridges' outbound backlog");
        return [];
      } finally {
        setImmediate(() => {
          backlogs = undefined;
        });
      }
    })();
    return backlogs;
  };
  new Gauge({
    name: "moniro_outbound_pending",
    help: "Outbound messages waiting on MONIRO_OUT for the bridge of a channel (stored, not yet delivered or not yet acknowledged)",
    labelNames: ["channel"],
    registers: [options.registry],
    async collect() {
      this.reset();
      for (const backlog of await read()) this.set({ channel: backlog.channel }, backlog.pending);
    },
  });
  new Gauge({
    name: "moniro_outbound_stalled",
    help: "1 when outbound messages wait for a channel's bridge and no bridge process is pulling them",
    labelNames: ["channel"],
    registers: [options.registry],
    async collect() {
      this.reset();
      for (const backlog of await read()) this.set({ channel: backlog.channel }, backlog.stalled ? 1 : 0);
    },
  });
}
