import type { IncomingHttpHeaders } from "node:http";
import type { RequestHandler } from "express";
import { HttpError } from "./http-error.js";
import { isLoopback, urlHost } from "./loopback.js";

const FIX =
  "call the gateway from its own origin, list the page's origin in MONIRO_GATEWAY_ALLOWED_ORIGINS, or run it with MONIRO_API_KEYS instead of MONIRO_GATEWAY_OPEN";

/** The origins a page served by this gateway's own address has: its configured host and `localhost`, on its port. */
function ownOrigins(host: string, port: number): Set<string> {
  const names = new Set([urlHost(host), "localhost"]);
  if (host === "localhost") for (const name of ["127.0.0.1", "[::1]"]) names.add(name);
  return new Set([...names].map((name) => `http://${name}:${port}`));
}

/** The hostname of a Host header (`127.0.0.1:8080`, `[::1]:8080`, `localhost`), or undefined when malformed. */
function hostnameOf(header: string): string | undefined {
  try {
    return new URL(`http://${header}`).hostname;
  } catch {
    return undefined;
  }
}

/**
 * Whether a Host header names a loopback address. Clients send the same Host
 * on every request, so the last answers are kept (a URL parse per request
 * is a measurable part of a DM's cost); a few entries, so a client that
 * varies it cannot grow the cache.
 */
const loopbackHosts = new Map<string, boolean>();
const KEPT_HOSTS = 8;
function isLoopbackHost(host: string): boolean {
  let loopback = loopbackHosts.get(host);
  if (loopback === undefined) {
    const hostname = hostnameOf(host);
    loopback = hostname !== undefined && isLoopback(hostname);
    if (loopbackHosts.size >= KEPT_HOSTS) loopbackHosts.clear();
    loopbackHosts.set(host, loopback);
  }
  return loopback;
}

function forbidden(code: "forbidden_origin" | "forbidden_host", message: string): HttpError {
  return new HttpError(403, code, message);
}

export interface OpenAccessSettings {
  host: string;
  allowed: ReadonlySet<string>;
}

/** Why open access refuses a request with these headers (to this local port), or undefined when it may pass. */
export function openAccessRefusal(
  headers: IncomingHttpHeaders,
  localPort: number | undefined,
  options: OpenAccessSettings,
): HttpError | undefined {
  const host = headers.host;
  if (host !== undefined && !isLoopbackHost(host)) {
    // A page whose domain was rebound to 127.0.0.1 sends its own name here; only loopback names are this gateway.
    return forbidden(
      "forbidden_host",
      `Host '${host.slice(0, 100)}' is not a loopback address: open access (MONIRO_GATEWAY_OPEN) answers only requests to 127.0.0.1, ::1 or localhost`,
    );
  }
  const origin = headers.origin;
  if (origin !== undefined) {
    const own = ownOrigins(options.host, localPort ?? 0);
    if (!own.has(origin) && !options.allowed.has(origin)) {
      return forbidden(
        "forbidden_origin",
        `Origin '${origin.slice(0, 200)}' may not use this gateway: with open access it answers only its own origin (${[...own].join(", ")}) and the origins in MONIRO_GATEWAY_ALLOWED_ORIGINS; ${FIX}`,
      );
    }
    if (options.allowed.has(origin)) return undefined;
  }
  if (headers["sec-fetch-site"] === "cross-site") {
    return forbidden(
      "forbidden_origin",
      `a cross-site request (Sec-Fetch-Site: cross-site) may not use this gateway with open access; ${FIX}`,
    );
  }
  return undefined;
}

/**
 * Open access (no API keys) is for one developer's machine: the gateway then
 * listens on loopback only (config.ts refuses anything else), and this guard
 * keeps web pages out: any browser can reach loopback, so a request from
 * another origin (`Origin`, `Sec-Fetch-Site: cross-site`) or addressed to a
 * non-loopback name (DNS rebinding) is refused with 403. With API keys it does
 * nothing: a page cannot attach the bearer key to a cross-site request.
 */
export function openAccessGuard(options: {
  open: boolean;
  host: string;
  allowedOrigins: readonly string[];
}): RequestHandler {
  const settings = { host: options.host, allowed: new Set(options.allowedOrigins) };
  return (request, _response, next) => {
    if (!options.open) return next();
    next(openAccessRefusal(request.headers, request.socket.localPort, settings));
  };
}
