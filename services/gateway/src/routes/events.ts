import { Router } from "express";
import { knownAgent } from "../http/agent-param.js";
import { gapFrame } from "../http/gap-frame.js";
import { HttpError } from "../http/http-error.js";
import { methodNotAllowed } from "../http/method-not-allowed.js";
import { startSse } from "../http/sse-writer.js";
import type { AgentCatalog, AgentStream, AgentStreamSource } from "../ports.js";

/** `Last-Event-ID` (header, or `?lastEventId=` for clients that cannot set headers; given twice, refused before: http/known-query.ts) → a stream sequence. */
function resumeFrom(header: string | undefined, query: unknown): number | undefined {
  const raw = header ?? (typeof query === "string" ? query : undefined);
  if (raw === undefined || raw === "") return undefined;
  const sequence = /^\d{1,16}$/.test(raw) ? Number(raw) : Number.NaN;
  if (!Number.isSafeInteger(sequence)) {
    throw new HttpError(
      400,
      "invalid_query",
      `Last-Event-ID '${raw.slice(0, 64)}' is not an event id this stream sent: ids are the whole numbers of the SSE 'id:' lines (0 to ${Number.MAX_SAFE_INTEGER}); reconnect with one of them or without Last-Event-ID`,
    );
  }
  return sequence;
}

/**
 * `GET /v1/agents/:agent/events`: Server-Sent Events of the agent's
 * `moniro.evt.<agent>.*` events (live) and its `http:` outbound messages
 * (from MONIRO_OUT, `id:` = stream sequence, so a client that reconnects
 * with Last-Event-ID gets every message it missed). One subscription per
 * gateway feeds every client (nats/agent-stream-source.ts, http/sse-fanout.ts).
 */
export function eventsRouter(deps: { agents: AgentCatalog; streams: AgentStreamSource; heartbeatMs: number }): Router {
  const router = Router();
  router.get("/v1/agents/:agent/events", async (request, response) => {
    const agent = await knownAgent(deps.agents, request.params.agent);
    const afterSequence = resumeFrom(request.get("last-event-id"), request.query.lastEventId);
    let stream: AgentStream | undefined;
    let closed = false;
    const finish = () => {
      if (closed) return;
      closed = true;
      void stream?.close();
    };
    request.on("close", finish);
    try {
      stream = await deps.streams.open(agent, afterSequence !== undefined ? { afterSequence } : {});
    } catch (error) {
      request.off("close", finish);
      throw new HttpError(
        503,
        "nats_unavailable",
        `cannot subscribe to the events of '${agent}': ${(error as Error).message}`,
        {
          "Retry-After": "2",
        },
      );
    }
    if (closed) {
      void stream.close();
      return;
    }
    const sink = startSse(response, {
      heartbeatMs: deps.heartbeatMs,
      ...(stream.startsAfter !== undefined ? { lastEventId: String(stream.startsAfter) } : {}),
    });
    if (stream.gap) sink.write({ bytes: gapFrame(stream.gap) });
    stream.attach(sink);
  });
  router.all("/v1/agents/:agent/events", methodNotAllowed("GET"));
  return router;
}
