import { inOpenSpan, type Telemetry } from "@moniro/telemetry";
import type { RequestHandler } from "express";

/**
 * One server span per API request, active while the route runs, so what the
 * route publishes on NATS carries this span's `traceparent`. The span ends
 * when the response finishes (or the connection closes first); it is opened
 * and ended without a promise, as this runs on every request. Event streams
 * are left out: their span would last as long as the connection.
 */
export function serverSpans(tracer: Telemetry["tracer"]): RequestHandler {
  return (request, response, next) => {
    if (request.method === "GET" && request.path.endsWith("/events")) return next();
    const url = request.originalUrl;
    const query = url.indexOf("?");
    inOpenSpan(
      tracer,
      `HTTP ${request.method}`,
      { "http.request.method": request.method, "url.path": query < 0 ? url : url.slice(0, query) },
      (span) => {
        let ended = false;
        const done = () => {
          if (ended) return;
          ended = true;
          const route = request.route?.path;
          if (typeof route === "string") span.updateName(`${request.method} ${route}`);
          span.setAttributes({
            "http.route": typeof route === "string" ? route : "",
            "http.response.status_code": response.statusCode,
          });
          span.end();
        };
        response.once("finish", done);
        response.once("close", done);
        next();
      },
      // A caller's W3C traceparent makes the request part of its trace.
      { kind: "server", parent: request.get("traceparent") },
    );
  };
}
