// The runtime logs through @moniro/telemetry's logger slice (pino satisfies it).
export { errorFields, type LogSink as RuntimeLogger, silentLogger } from "@moniro/telemetry";
