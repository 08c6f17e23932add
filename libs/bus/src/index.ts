export { type Bus, createBus } from "./bus.js";
export { type ConnectOptions, connectDelay, connectNats, NatsAuthenticationError } from "./connect.js";
export { type ConsumeOptions, consumeEnvelopes, type EnvelopeConsumer, type HandlerOutcome } from "./consume.js";
export {
  deadLetterInboxEntry,
  deadLetterInputs,
  dlqRecord,
  dlqSubjectFor,
  inboxDeadLetters,
  MAX_DLQ_PAYLOAD,
  publishDlq,
  retryQuarantinedEntries,
} from "./dlq.js";
export {
  BusClosedError,
  BusError,
  JetStreamPublishError,
  NoRespondersError,
  PayloadTooLargeError,
  PublishRefusedError,
  type RequestFailure,
  RequestTimeoutError,
  ResponderLostError,
  requestFailure,
} from "./errors.js";
export { KEEPALIVE_HEADER, startKeepalive } from "./keepalive.js";
export { type BusLogger, silentBusLogger } from "./logger.js";
export { inMessageSpan } from "./message-span.js";
export {
  NATS_USERS,
  type NatsUser,
  natsAuthorization,
  natsConfigFiles,
  natsServerConfig,
  passwordVariable,
} from "./nats-permissions.js";
export {
  NatsConfigError,
  type NatsConfigFields,
  type NatsSettings,
  natsConnectionOptions,
  natsSettingsOf,
} from "./nats-settings.js";
export {
  isInboundOnlyChannel,
  type OutboundBacklog,
  type OutboundRoutes,
  outboundBacklog,
  outboundBacklogs,
  outboundConsumerName,
  outboundRoutes,
  STREAM_READ_CHANNELS,
} from "./outbound-routes.js";
export { publishCore, publishEnvelope, type RequestOptions, request } from "./publish.js";
export { ReplyTooLargeError, respondJson } from "./respond.js";
export { drainNats, onShutdown } from "./shutdown.js";
export {
  DEFAULT_STREAM_LIMITS,
  deleteStreams,
  type EnsureStreamsOptions,
  ensureStreams,
  type StreamKey,
  type StreamLimitSettings,
  type StreamLimits,
  streamConfigs,
} from "./streams.js";
export { type SubscribeOptions, subscribeEnvelopes } from "./subscribe.js";
export { traceCarrierOf, traceContextOf, traceHeaders } from "./trace-headers.js";
