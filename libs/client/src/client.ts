import { type ApiRoute, core } from "@moniro/api";
import { GatewayUnreachableError, MoniroApiError, networkReason } from "./errors.js";
import { type EventStreamOptions, openEventStream } from "./event-stream.js";
import { type HttpAnswer, type HttpRequestInit, nodeHttpRequest } from "./node-http.js";
import type { RouteArgs, RouteInput, RouteMethods, RouteOutput } from "./route-types.js";
import type { SseEvent } from "./sse-parser.js";

export const DEFAULT_GATEWAY_URL = "http://127.0.0.1:8080";

export interface ClientOptions {
  /** The gateway's base URL; default $MONIRO_GATEWAY_URL, else http://127.0.0.1:8080. */
  baseUrl?: string;
  /** Bearer key; default $MONIRO_API_KEY. */
  apiKey?: string;
  /** How long a (non-streaming) request may take; default 30 s. */
  timeoutMs?: number;
  /**
   * Replaces the transport (tests). Default: node:http for calls (Node 20's
   * `fetch` costs a short-lived process ~75 ms of CPU to start), the global
   * `fetch` for the event stream.
   */
  fetch?: typeof fetch;
  /** Where the defaults are read from; default process.env. */
  env?: Record<string, string | undefined>;
  /** How an invalid `baseUrl` is named in the error (the CLI: `--gateway`); default `baseUrl`. */
  baseUrlName?: string;
}

/**
 * The gateway's URL is not an http(s) URL (`localhost:8080`, `ftp://x`): bad
 * input, not an unreachable gateway. Names where it came from and what to write.
 */
export class InvalidGatewayUrlError extends TypeError {
  override readonly name = "InvalidGatewayUrlError";
  constructor(
    /** Where the URL came from: `--gateway`, `MONIRO_GATEWAY_URL`, `baseUrl`. */
    readonly source: string,
    readonly value: string,
  ) {
    super(`${source} '${value}' is not an http(s) URL: write ${suggestedUrl(value)}`);
  }
}

/** The http:// URL meant by a value without a scheme (`localhost:8080`) or with another one (`ftp://x`). */
function suggestedUrl(value: string): string {
  const rest = value.trim().replace(/^[A-Za-z][A-Za-z0-9+.-]*:\/\//, "");
  const guess = `http://${rest}`;
  return URL.canParse(guess) && rest !== "" ? guess : DEFAULT_GATEWAY_URL;
}

/** The gateway's base URL without trailing slashes; throws InvalidGatewayUrlError unless it is http(s). */
export function gatewayBaseUrl(value: string, source: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new InvalidGatewayUrlError(source, value);
  }
  if ((url.protocol !== "http:" && url.protocol !== "https:") || url.host === "") {
    throw new InvalidGatewayUrlError(source, value);
  }
  return value.replace(/\/+$/, "");
}

/** Resolves `:name` segments of a route's path with the given parameters. */
export function routePath(path: string, params: Record<string, unknown> = {}): string {
  return path.replace(/:([A-Za-z_][A-Za-z0-9_]*)/g, (_match, name: string) => {
    const value = params[name];
    if (value === undefined || value === null || value === "") {
      throw new TypeError(`missing path parameter '${name}' for ${path}`);
    }
    return encodeURIComponent(String(value));
  });
}

function queryString(query: Record<string, unknown> | undefined): string {
  if (!query) return "";
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) {
    if (value !== undefined && value !== null) search.set(name, String(value));
  }
  const text = search.toString();
  return text ? `?${text}` : "";
}

/**
 * A typed client of the Moniro gateway. `call(route, { params, query, body })`
 * works for every route described in @moniro/api; the core routes are also
 * methods named by their ids (`client.sendMessage({ params: { agent }, body })`);
 * `events(agent)` streams Server-Sent Events and reconnects with Last-Event-ID.
 * Error answers throw MoniroApiError; when nothing answers, GatewayUnreachableError;
 * a base URL that is not http(s) throws InvalidGatewayUrlError at construction.
 */
export class MoniroClient {
  readonly baseUrl: string;
  private readonly apiKey: string | undefined;
  private readonly timeoutMs: number;
  private readonly fetchImpl: typeof fetch;
  private readonly request: (url: string, init: HttpRequestInit) => Promise<HttpAnswer>;

  constructor(options: ClientOptions = {}) {
    const env = options.env ?? process.env;
    this.baseUrl = options.baseUrl
      ? gatewayBaseUrl(options.baseUrl, options.baseUrlName ?? "baseUrl")
      : env.MONIRO_GATEWAY_URL
        ? gatewayBaseUrl(env.MONIRO_GATEWAY_URL, "MONIRO_GATEWAY_URL")
        : DEFAULT_GATEWAY_URL;
    const key = options.apiKey ?? env.MONIRO_API_KEY;
    this.apiKey = key ? key : undefined;
    this.timeoutMs = options.timeoutMs ?? 30_000;
    this.fetchImpl = options.fetch ?? fetch;
    this.request = options.fetch ?? nodeHttpRequest;
  }

  /** Headers every request carries: the bearer key, when there is one. */
  headers(): Record<string, string> {
    return this.apiKey ? { authorization: `Bearer ${this.apiKey}` } : {};
  }

  /** The full URL of a route with these parameters and query. */
  url<R extends ApiRoute>(route: R, input: Partial<RouteInput<R>> = {}): string {
    const { params, query } = input as { params?: Record<string, unknown>; query?: Record<string, unknown> };
    return `${this.baseUrl}${routePath(route.path, params)}${queryString(query)}`;
  }

  /** Calls a route; resolves with its success body (JSON parsed; text for a text route). */
  async call<R extends ApiRoute>(route: R, ...[input]: RouteArgs<R>): Promise<RouteOutput<R>> {
    const url = this.url(route, input ?? {});
    const method = route.method.toUpperCase();
    const body = (input as { body?: unknown } | undefined)?.body;
    const sendsBody = route.body !== undefined && body !== undefined;
    let response: HttpAnswer;
    try {
      response = await this.request(url, {
        method,
        headers: {
          accept: "application/json",
          ...(sendsBody ? { "content-type": "application/json" } : {}),
          ...this.headers(),
        },
        ...(sendsBody ? { body: JSON.stringify(body) } : {}),
        signal: AbortSignal.timeout(this.timeoutMs),
      });
    } catch (error) {
      throw new GatewayUnreachableError(this.baseUrl, networkReason(error), { cause: error });
    }
    let text: string;
    try {
      text = await response.text();
    } catch (error) {
      throw new GatewayUnreachableError(this.baseUrl, `the answer broke off: ${networkReason(error)}`, {
        cause: error,
      });
    }
    if (!response.ok) throw MoniroApiError.from(response.status, `${method} ${url}`, text);
    const success = route.responses[response.status];
    if (success?.contentType && success.contentType !== "application/json") return text as RouteOutput<R>;
    if (text === "") return undefined as RouteOutput<R>;
    try {
      return JSON.parse(text) as RouteOutput<R>;
    } catch {
      throw MoniroApiError.from(response.status, `${method} ${url}`, text);
    }
  }

  /**
   * The agent's events as they happen. Reconnects after a drop (backoff,
   * honouring the server's `retry:`) and resumes with Last-Event-ID, so every
   * outbound message arrives exactly once. Ends when `signal` aborts.
   */
  events(agent: string, options: Omit<EventStreamOptions, "url" | "headers" | "fetch"> = {}): AsyncGenerator<SseEvent> {
    return openEventStream({
      ...options,
      baseUrl: this.baseUrl,
      url: this.url(core.streamEvents, { params: { agent } }),
      headers: this.headers(),
      fetch: this.fetchImpl,
    });
  }
}

/** Binds a record of routes as methods named by their ids. */
export function bindRoutes<Routes extends Record<string, ApiRoute>>(
  client: MoniroClient,
  routes: Routes,
): RouteMethods<Routes> {
  const methods: Record<string, unknown> = {};
  for (const [id, route] of Object.entries(routes)) {
    methods[id] = (input?: RouteInput<ApiRoute>) => client.call(route, ...([input] as RouteArgs<ApiRoute>));
  }
  return methods as RouteMethods<Routes>;
}

export type Client = MoniroClient & RouteMethods<typeof core>;

/** A client with a method per core route (see MoniroClient). */
export function createClient(options: ClientOptions = {}): Client {
  const client = new MoniroClient(options);
  return Object.assign(client, bindRoutes(client, core));
}
