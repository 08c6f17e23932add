/**
 * The agent-runner's runtime: everything around the pure loop (leases,
 * wakeups, takeover, ingest, NATS and Redis adapters). main.ts wires it.
 */

export { loopSettingsOf, runtimeAgentOf } from "./agent-definitions.js";
export { type AgentDirectory, type RuntimeAgent, staticDirectory } from "./agent-directory.js";
export {
  AgentRuntime,
  type AgentRuntimeOptions,
  DEFAULT_TIMING,
  type RuntimeTiming,
  type WakeResult,
} from "./agent-runtime.js";
export { startControlResponder } from "./control-responder.js";
export { INBOUND_CONSUMER, type InboundConsumer, startInboundConsumer } from "./inbound-consumer.js";
export { createIngest, type IngestOutcome } from "./ingest.js";
export { LeaseKeeper, type LeaseTiming } from "./lease-keeper.js";
export { errorFields, type RuntimeLogger, silentLogger } from "./logger.js";
export { NatsEventSink, NatsOutbox } from "./nats-events.js";
export { NatsToolBus, type NatsToolBusOptions } from "./nats-tool-bus.js";
export { RUNNER_REDIS_OPTIONS } from "./redis-options.js";
export { type LiveDirectory, registryDirectory, removalMessage, unservableAgents } from "./registry-directory.js";
export { type Runner, type RunnerOptions, startRunner } from "./runner.js";
export { toolSpecsFor } from "./tool-specs.js";
