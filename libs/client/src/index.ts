export {
  bindRoutes,
  type Client,
  type ClientOptions,
  createClient,
  DEFAULT_GATEWAY_URL,
  gatewayBaseUrl,
  InvalidGatewayUrlError,
  MoniroClient,
  routePath,
} from "./client.js";
export { GatewayUnreachableError, MoniroApiError, networkReason, UNREACHABLE_HINT } from "./errors.js";
export { type EventStreamOptions, openEventStream } from "./event-stream.js";
export type { RouteArgs, RouteInput, RouteMethods, RouteOutput } from "./route-types.js";
export { type SseEvent, SseParser } from "./sse-parser.js";
