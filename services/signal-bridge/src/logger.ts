// The bridge logs through @moniro/telemetry (pino JSON with trace ids); this is the slice its pieces take.
export { type LogSink as Logger, silentLogger } from "@moniro/telemetry";
