import { AsyncResource } from "node:async_hooks";
import { isUtf8 } from "node:buffer";
import type { IncomingMessage, ServerResponse } from "node:http";
import { inOpenSpan, type Telemetry } from "@moniro/telemetry";
import type { HttpMetrics } from "../ports.js";
import { acceptMessage, MESSAGES_ROUTE, type MessageDeps } from "../routes/messages.js";
import { authRefusal } from "./auth.js";
import { fromParserError, respondWithError } from "./http-error.js";
import { notUtf8 } from "./json-body.js";
import { type OpenAccessSettings, openAccessRefusal } from "./open-access-guard.js";
import { sendJson } from "./send-json.js";

/** `/v1/agents/<agent>/messages` exactly: no query, no percent-encoding, no trailing slash (those go to express). */
const MESSAGES_PATH = /^\/v1\/agents\/([^/?#%]+)\/messages$/;
/** The Content-Types taken here; any other (charset, parameters, case) is left to express's checks. */
const PLAIN_JSON = new Set(["application/json", "application/json; charset=utf-8", "application/json;charset=utf-8"]);
const DIGITS = /^[0-9]{1,15}$/;

export interface FastMessagesOptions extends MessageDeps {
  auth: { keys: readonly string[]; open: boolean };
  guard: OpenAccessSettings;
  bodyLimitBytes: number;
  metrics: HttpMetrics;
  tracer?: Telemetry["tracer"];
  onUnexpected: (error: unknown) => void;
}

/**
 * The hot route, `POST /v1/agents/:agent/messages` (every DM), answered
 * without express: no router walk, middleware chain, prototype swap, type-is
 * or raw-body stream machinery, which together were most of the JavaScript a
 * DM cost the gateway. It takes only the plain case, decided from the headers
 * before a byte of the body is read: exact path, a JSON Content-Type in UTF-8,
 * a Content-Length within the limit, no Content-Encoding or chunking, and a
 * request that open access and the API keys let through. Any other request
 * returns false and goes to express, which answers it as before (a 401 or 403
 * included). What it does is what the express path does: the same metrics and
 * server span, the same body rules as body-parser (UTF-8 only, a BOM dropped,
 * an empty document is `{}`), then `acceptMessage`; an error found once the
 * body is read gets the answer express's error handler gives (http-error.ts).
 */
export function fastMessages(
  options: FastMessagesOptions,
): (request: IncomingMessage, response: ServerResponse) => boolean {
  return (request, response) => {
    if (request.method !== "POST") return false;
    const url = request.url ?? "";
    const match = MESSAGES_PATH.exec(url);
    if (!match) return false;
    const headers = request.headers;
    const type = headers["content-type"];
    if (type === undefined || !PLAIN_JSON.has(type.toLowerCase())) return false;
    if (headers["content-encoding"] !== undefined || headers["transfer-encoding"] !== undefined) return false;
    const length = headers["content-length"];
    if (length === undefined || !DIGITS.test(length)) return false;
    const bytes = Number(length);
    if (bytes === 0 || bytes > options.bodyLimitBytes) return false;
    if (options.auth.open && openAccessRefusal(headers, request.socket.localPort, options.guard)) return false;
    if (authRefusal(headers.authorization, options.auth)) return false;

    const started = process.hrtime.bigint();
    // As in express: a request refused before its route ran (its body) is counted as "unmatched".
    const state = { routed: false };
    response.on("finish", () => {
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      const route = state.routed ? MESSAGES_ROUTE : "unmatched";
      options.metrics.observe({ route, method: "POST", status: response.statusCode }, seconds);
    });
    const agent = match[1];
    if (!options.tracer) {
      readBody(request, response, bytes, agent, state, options);
      return true;
    }
    inOpenSpan(
      options.tracer,
      "HTTP POST",
      { "http.request.method": "POST", "url.path": url },
      (span) => {
        let ended = false;
        const done = () => {
          if (ended) return;
          ended = true;
          if (state.routed) span.updateName(`POST ${MESSAGES_ROUTE}`);
          span.setAttributes({
            "http.route": state.routed ? MESSAGES_ROUTE : "",
            "http.response.status_code": response.statusCode,
          });
          span.end();
        };
        response.once("finish", done);
        response.once("close", done);
        readBody(request, response, bytes, agent, state, options);
      },
      { kind: "server", parent: typeof headers.traceparent === "string" ? headers.traceparent : undefined },
    );
    return true;
  };
}

/** Reads the body (Content-Length bytes), then answers. */
function readBody(
  request: IncomingMessage,
  response: ServerResponse,
  bytes: number,
  agent: string | undefined,
  state: { routed: boolean },
  options: FastMessagesOptions,
): void {
  const chunks: Buffer[] = [];
  let settled = false;
  const fail = (error: unknown) => {
    if (settled) return;
    settled = true;
    request.unpipe?.();
    request.resume();
    respondWithError(error, request, response, options.onUnexpected);
  };
  // The end runs in this context (the server span's), as raw-body's callback does; a resource's
  // runInAsyncScope, not AsyncResource.bind, whose per-call wrapper costs more than the rest here.
  const scope = new AsyncResource("moniro.gateway.message-body");
  request.on("data", (chunk: Buffer) => chunks.push(chunk));
  request.on("end", () =>
    scope.runInAsyncScope(() => {
      if (settled) return;
      settled = true;
      const body = chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, bytes);
      let parsed: unknown;
      try {
        parsed = parseJson(body, request);
      } catch (error) {
        respondWithError(error, request, response, options.onUnexpected);
        return;
      }
      state.routed = true;
      acceptMessage(options, agent, parsed).then(
        (accepted) => sendJson(response, 202, accepted),
        (error: unknown) => respondWithError(error, request, response, options.onUnexpected),
      );
    }),
  );
  // What body-parser answers when the client goes away mid-body (nobody may be left to read it).
  request.on("aborted", () => fail(fromParserError({ status: 400, message: "request aborted" }, request)));
  request.on("error", (error) => fail(fromParserError({ status: 400, message: error.message }, request) ?? error));
}

/**
 * body-parser's JSON rules (json({ strict: false }) with the gateway's UTF-8
 * check): bytes that are not UTF-8 are a 415, a leading BOM is dropped (its
 * decoder does), an empty document is `{}`, a syntax error is a 400 `bad_json`
 * with JSON.parse's message.
 */
function parseJson(body: Buffer, request: IncomingMessage): unknown {
  if (!isUtf8(body)) throw notUtf8();
  let text = body.toString("utf8");
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  if (text.length === 0) return {};
  try {
    return JSON.parse(text);
  } catch (error) {
    throw fromParserError({ type: "entity.parse.failed", message: (error as Error).message }, request);
  }
}
