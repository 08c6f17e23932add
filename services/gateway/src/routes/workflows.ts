import { channelPostBodySchema, startInstanceBodySchema } from "@moniro/api";
import { isChannelCursor, STREAM_ID_PART_MAX } from "@moniro/envelopes";
import { compareEntryIds, type WorkspaceStore } from "@moniro/store";
import { Router } from "express";
import { gapFrame, type StreamGap } from "../http/gap-frame.js";
import { HttpError } from "../http/http-error.js";
import { methodNotAllowed } from "../http/method-not-allowed.js";
import { parseBody } from "../http/schema-body.js";
import { startSse } from "../http/sse-writer.js";
import type { ChannelWatch } from "../workflows/channel-feed.js";
import type { ChannelSseMetrics } from "../workflows/channel-metrics.js";
import { streamChannel } from "../workflows/channel-stream.js";
import type { UnreadableEntryReporter } from "../workflows/unreadable-entries.js";
import type { WorkflowInstances } from "../workflows/workflow-instances.js";

const param = (value: unknown): string => (typeof value === "string" ? value : "");

/** `Last-Event-ID` (header, or `?lastEventId=`) → a channel entry id to read after. */
function resumeAfter(header: string | undefined, query: unknown): string | undefined {
  const raw = header ?? (typeof query === "string" ? query : undefined);
  if (raw === undefined || raw === "") return undefined;
  if (!isChannelCursor(raw)) {
    throw new HttpError(
      400,
      "invalid_query",
      `Last-Event-ID '${raw.slice(0, 64)}' is not a post id of this channel (ids look like '1732612345678-0', each number at most ${STREAM_ID_PART_MAX}): reconnect with an id this stream sent, or without one to start at the channel's beginning`,
    );
  }
  return raw;
}

/**
 * Workflows and their instances (docs/api.md "Workflows"; schemas in
 * @moniro/api workflows.ts): definitions, start / read / stop, every
 * instance, and the channel over HTTP (post as `http:<from>`, SSE of posts).
 */
export function workflowsRouter(deps: {
  instances: WorkflowInstances;
  store: WorkspaceStore;
  heartbeatMs: number;
  /** The gateway's one watcher of the channels its SSE clients follow. */
  feed: ChannelWatch;
  /** Bytes that may wait for one slow channel SSE client before it is disconnected (MONIRO_GATEWAY_SSE_BUFFER). */
  maxBufferedBytes: number;
  metrics?: ChannelSseMetrics;
  /** Told of each channel entry a stream's catch-up read finds that is not a post (logged at warn). */
  unreadable?: UnreadableEntryReporter;
}): Router {
  const router = Router();
  const { instances } = deps;

  router.get("/v1/workflows", async (_request, response) => {
    const { workflows, problems } = await instances.definitions();
    response.json({
      workflows: [...workflows.values()].map((workflow) => ({
        name: workflow.name,
        ...(workflow.description !== undefined ? { description: workflow.description } : {}),
        file: workflow.file,
        agents: [...workflow.agents.values()].map((entry) => ({
          name: entry.key,
          kind: entry.kind,
          ...(entry.role !== undefined ? { role: entry.role } : {}),
        })),
        persistent: workflow.workspace.persistent,
        variables: workflow.variables,
        setupSteps: workflow.setup.length,
        hasKickoff: workflow.kickoff !== undefined,
      })),
      problems,
    });
  });
  router.all("/v1/workflows", methodNotAllowed("GET"));

  router.get("/v1/workflows/instances", async (_request, response) => {
    response.json({ instances: await instances.list() });
  });
  router.all("/v1/workflows/instances", methodNotAllowed("GET"));

  router.post("/v1/workflows/:workflow/instances", async (request, response) => {
    const body = parseBody(
      startInstanceBodySchema,
      request.body ?? {},
      '{"tag": "pr-123", "variables": {"pr": "123"}}',
    );
    const result = await instances.start(param(request.params.workflow), body);
    response.status(result.started ? 201 : 200).json(result);
  });
  router.all("/v1/workflows/:workflow/instances", methodNotAllowed("POST"));

  router.get("/v1/workflows/:workflow/instances/:tag", async (request, response) => {
    response.json(await instances.get(param(request.params.workflow), param(request.params.tag)));
  });
  router.delete("/v1/workflows/:workflow/instances/:tag", async (request, response) => {
    response.json(await instances.stop(param(request.params.workflow), param(request.params.tag)));
  });
  router.all("/v1/workflows/:workflow/instances/:tag", methodNotAllowed("GET, DELETE"));

  router.post("/v1/workflows/:workflow/instances/:tag/channel", async (request, response) => {
    const body = parseBody(
      channelPostBodySchema,
      request.body,
      '{"from": "jane", "text": "@alice please look at line 42"}',
    );
    const result = await instances.post(param(request.params.workflow), param(request.params.tag), body);
    response.status(201).json(result);
  });
  router.all("/v1/workflows/:workflow/instances/:tag/channel", methodNotAllowed("POST"));

  router.get("/v1/workflows/:workflow/instances/:tag/channel/events", async (request, response) => {
    const workflow = param(request.params.workflow);
    const tag = param(request.params.tag);
    const lastEventId = resumeAfter(request.get("last-event-id"), request.query.lastEventId);
    await instances.get(workflow, tag);
    const channel = deps.store.instance(workflow, tag).channel;
    let after = lastEventId;
    let gap: StreamGap | undefined;
    if (lastEventId !== undefined) {
      // An id past the channel's last post is not one it sent (made up, or from a clock ahead): resuming after it
      // would hold back every post until the ids reached it. The client resumes from the end and is told so.
      // (Its newest entry's id, a post or not: an unreadable entry is sent with its id too.)
      const last = await channel.lastId();
      if (last === undefined || compareEntryIds(lastEventId, last) > 0) {
        after = last ?? "0-0";
        gap = {
          code: "unknown_event_id",
          message: `Last-Event-ID ${lastEventId} is past the last post of this channel (${last ?? "it has none"}), so it is not an id this stream sent: resuming after ${after}`,
          lastEventId,
          resumesAfter: after,
        };
      }
    }
    const sse = startSse(response, {
      heartbeatMs: deps.heartbeatMs,
      ...(after !== undefined ? { lastEventId: after } : {}),
    });
    if (gap) sse.write({ bytes: gapFrame(gap) });
    streamChannel({
      feed: deps.feed,
      channel,
      workflow,
      tag,
      after,
      sse,
      request,
      maxBufferedBytes: deps.maxBufferedBytes,
      ...(deps.metrics ? { metrics: deps.metrics } : {}),
      ...(deps.unreadable ? { unreadable: deps.unreadable } : {}),
    });
  });
  router.all("/v1/workflows/:workflow/instances/:tag/channel/events", methodNotAllowed("GET"));
  return router;
}
