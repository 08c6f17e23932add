import type { IncomingMessage, ServerResponse } from "node:http";
import { ALL_ROUTES } from "@moniro/api";
import type { Subjects } from "@moniro/envelopes";
import type { PersonalContext, Tracing } from "@moniro/ports";
import type { WorkspaceStore } from "@moniro/store";
import type { ReadinessCheck, Registry, Telemetry } from "@moniro/telemetry";
import express, { type Express, type RequestHandler } from "express";
import type { RegistryLink } from "./agents/registry-link.js";
import type { HookCatalog } from "./hooks/hook-catalog.js";
import { bearerAuth } from "./http/auth.js";
import { exceptAgentPaths } from "./http/except-agent-paths.js";
import { fastMessages } from "./http/fast-messages.js";
import { errorHandler, HttpError } from "./http/http-error.js";
import { jsonBody } from "./http/json-body.js";
import { knownQueryParameters } from "./http/known-query.js";
import { openAccessGuard } from "./http/open-access-guard.js";
import { serverSpans } from "./http/server-span.js";
import type {
  AgentCatalog,
  AgentInspector,
  AgentStreamSource,
  ControlClient,
  DeadLetterQueue,
  GatewayLogger,
  HttpMetrics,
  InboundPublisher,
  SchedulerClient,
  ServiceProbes,
} from "./ports.js";
import { agentDefinitionsRouter } from "./routes/agent-definitions.js";
import { childrenRouter } from "./routes/children.js";
import { controlRouter } from "./routes/control.js";
import { dlqRouter } from "./routes/dlq.js";
import { eventsRouter } from "./routes/events.js";
import { healthRouter } from "./routes/health.js";
import { hooksRouter } from "./routes/hooks.js";
import { inspectRouter } from "./routes/inspect.js";
import { messagesRouter } from "./routes/messages.js";
import { openApiRouter } from "./routes/openapi.js";
import { type PairingClient, pairingRouter } from "./routes/pairing.js";
import { personalContextRouter } from "./routes/personal-context.js";
import { schedulesRouter } from "./routes/schedules.js";
import { sendRouter } from "./routes/send.js";
import { statusRouter } from "./routes/status.js";
import { workflowsRouter } from "./routes/workflows.js";

export interface GatewayAppOptions {
  /**
   * Bearer keys, or `open` access; an open gateway answers only its own
   * origin (`host`, default 127.0.0.1, on its port) and `allowedOrigins`.
   */
  auth: { keys: readonly string[]; open: boolean; host?: string; allowedOrigins?: readonly string[] };
  bodyLimitBytes: number;
  heartbeatMs: number;
  agents: AgentCatalog;
  /** The live registry: the agent-definition routes (`/v1/agents`, `…/definition`); absent without. */
  definitions?: RegistryLink;
  /** Webhooks (`POST /v1/hooks/:name`), which authenticate their callers themselves; none without. */
  hooks?: { catalog: HookCatalog; bodyLimitBytes: number };
  publisher: InboundPublisher;
  control: ControlClient;
  streams: AgentStreamSource;
  inspector: AgentInspector;
  /** Sub-agent records (`GET /v1/agents/:agent/children`); the route is absent without. */
  children?: Parameters<typeof childrenRouter>[0]["children"];
  readiness: Record<string, ReadinessCheck>;
  /** Request counts and latency are recorded here; `/metrics` serves `registry`. */
  metrics: HttpMetrics;
  registry: Registry;
  tracing: Tracing;
  /** Server spans per request (publishes inside them carry their traceparent); none without. */
  tracer?: Telemetry["tracer"];
  logger: GatewayLogger;
  now?: () => number;
  /** Memory, notes and todos of agents (`/v1/agents/:agent/memory|notes|todos`); the routes are absent without. */
  personal?: PersonalContext;
  /** Signal pairing (`/v1/pairing`), answered by the signal-bridge; the routes 404 without. */
  pairing?: PairingClient;
  /** Schedules (`/v1/schedules`, `/v1/agents/:agent/schedules`), answered by the scheduler; absent without. */
  scheduler?: SchedulerClient;
  /** The dead-letter queue (`/v1/dlq`); absent without. */
  dlq?: { queue: DeadLetterQueue; subjects: Subjects };
  /** Workflow instances: membership checks of workspace inputs and `POST /v1/send` to workspaces (refused as not running without). */
  workspaces?: WorkspaceStore;
  /** `GET /v1/status`; absent without. */
  probes?: ServiceProbes;
  /** Workflows and their instances (`/v1/workflows…`); absent without. */
  workflows?: Omit<Parameters<typeof workflowsRouter>[0], "heartbeatMs">;
}

/** Counts every answered request under its route pattern (`/v1/agents/:agent/messages`), never the raw path. */
function measure(metrics: HttpMetrics): RequestHandler {
  return (request, response, next) => {
    const started = process.hrtime.bigint();
    response.on("finish", () => {
      const pattern = request.route?.path;
      const route = typeof pattern === "string" ? pattern : "unmatched";
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      metrics.observe({ route, method: request.method, status: response.statusCode }, seconds);
    });
    next();
  };
}

/**
 * The gateway's HTTP API (docs/api.md). Health, readiness and metrics are
 * open; webhooks authenticate their callers per hook; everything else under
 * /v1 needs a bearer key (unless open access is on,
 * which then refuses other origins). Authentication runs before the body is
 * parsed, so an unauthenticated client learns nothing about the body it sent;
 * only `application/json` bodies are parsed. Every answer, errors included, is JSON.
 */
export function createGatewayApp(options: GatewayAppOptions): Express {
  const app = express();
  app.disable("x-powered-by");
  app.set("etag", false);
  app.use(measure(options.metrics));
  app.use(
    openAccessGuard({
      open: options.auth.open,
      host: options.auth.host ?? "127.0.0.1",
      allowedOrigins: options.auth.allowedOrigins ?? [],
    }),
  );
  // Unknown query parameters are refused (http/known-query.ts): on the open routes here, on the others once authenticated.
  app.use(knownQueryParameters(ALL_ROUTES.filter((route) => route.public)));
  app.use(exceptAgentPaths(healthRouter({ readiness: options.readiness, registry: options.registry })));
  app.use(exceptAgentPaths(openApiRouter()));
  if (options.tracer) app.use("/v1", serverSpans(options.tracer));
  if (options.hooks) {
    app.use(
      exceptAgentPaths(
        hooksRouter({
          hooks: options.hooks.catalog,
          publisher: options.publisher,
          tracing: options.tracing,
          logger: options.logger,
          bodyLimitBytes: options.hooks.bodyLimitBytes,
          now: options.now ?? Date.now,
        }),
      ),
    );
  }
  app.use("/v1", bearerAuth(options.auth));
  app.use(knownQueryParameters(ALL_ROUTES.filter((route) => !route.public)));
  app.use("/v1", jsonBody({ limitBytes: options.bodyLimitBytes }));
  app.use(
    messagesRouter({
      agents: options.agents,
      publisher: options.publisher,
      ...(options.workspaces ? { workspaces: options.workspaces } : {}),
      ...(options.workflows ? { workflows: options.workflows.instances } : {}),
      tracing: options.tracing,
      now: options.now ?? Date.now,
    }),
  );
  app.use(
    sendRouter({
      agents: options.agents,
      publisher: options.publisher,
      ...(options.workspaces ? { workspaces: options.workspaces } : {}),
      ...(options.workflows ? { workflows: options.workflows.instances } : {}),
      now: options.now ?? Date.now,
    }),
  );
  app.use(eventsRouter({ agents: options.agents, streams: options.streams, heartbeatMs: options.heartbeatMs }));
  if (options.definitions) {
    app.use(
      agentDefinitionsRouter({ registry: options.definitions, inspector: options.inspector, logger: options.logger }),
    );
  }
  if (options.workflows) app.use(workflowsRouter({ ...options.workflows, heartbeatMs: options.heartbeatMs }));
  app.use(inspectRouter({ agents: options.agents, inspector: options.inspector }));
  if (options.children) app.use(childrenRouter({ ...options, children: options.children }));
  app.use(controlRouter({ agents: options.agents, control: options.control }));
  if (options.personal) app.use(personalContextRouter({ agents: options.agents, personal: options.personal }));
  if (options.pairing) app.use(pairingRouter({ pairing: options.pairing }));
  if (options.scheduler) app.use(schedulesRouter({ agents: options.agents, scheduler: options.scheduler }));
  if (options.dlq)
    app.use(dlqRouter({ agents: options.agents, dlq: options.dlq.queue, subjects: options.dlq.subjects }));
  if (options.probes) {
    app.use(statusRouter({ agents: options.agents, inspector: options.inspector, probes: options.probes }));
  }
  app.use((request, _response, next) => {
    next(
      new HttpError(
        404,
        "not_found",
        `no route ${request.method} ${request.path}; see docs/api.md (POST /v1/agents/:agent/messages, GET /v1/agents/:agent/events, …)`,
      ),
    );
  });
  const onUnexpected = (error: unknown) => options.logger.error({ err: error }, "unexpected error in a request");
  app.use(errorHandler(onUnexpected));
  return answerFirst(
    app,
    fastMessages({
      agents: options.agents,
      publisher: options.publisher,
      ...(options.workspaces ? { workspaces: options.workspaces } : {}),
      ...(options.workflows ? { workflows: options.workflows.instances } : {}),
      tracing: options.tracing,
      now: options.now ?? Date.now,
      auth: options.auth,
      guard: { host: options.auth.host ?? "127.0.0.1", allowed: new Set(options.auth.allowedOrigins ?? []) },
      bodyLimitBytes: options.bodyLimitBytes,
      metrics: options.metrics,
      ...(options.tracer ? { tracer: options.tracer } : {}),
      onUnexpected,
    }),
  );
}

type Handle = (request: IncomingMessage, response: ServerResponse, callback?: unknown) => void;

/**
 * Lets `fast` answer a request before express sees it (express's app function
 * calls `app.handle` for every request, whether from `app.listen` or a test's
 * supertest); what `fast` declines goes through express unchanged.
 */
function answerFirst(app: Express, fast: (request: IncomingMessage, response: ServerResponse) => boolean): Express {
  const target = app as Express & { handle: Handle };
  const handle = target.handle.bind(app);
  target.handle = (request, response, callback) => {
    if (!fast(request, response)) handle(request, response, callback);
  };
  return app;
}
