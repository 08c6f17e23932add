import { Counter, type Registry } from "@moniro/telemetry";

/**
 * `moniro_gateway_sse_slow_clients_dropped_total`: clients of the agents'
 * events streams (`GET /v1/agents/:agent/events`) disconnected with an
 * `overflow` event, as `moniro_gateway_channel_sse_slow_clients_dropped_total`
 * counts the channel streams'.
 */
export function sseSlowClientsDropped(registry: Registry): () => void {
  const dropped = new Counter({
    name: "moniro_gateway_sse_slow_clients_dropped_total",
    help: "Agent events SSE clients disconnected for reading too slowly (more than MONIRO_GATEWAY_SSE_BUFFER unsent bytes, or nothing taken for 30 s while catching up)",
    registers: [registry],
  });
  return () => dropped.inc();
}
