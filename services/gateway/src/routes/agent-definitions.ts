import { applyAgentBodySchema, createAgentBodySchema } from "@moniro/api";
import { NAME_PATTERN } from "@moniro/envelopes";
import {
  type AgentRecord,
  type AgentRegistry,
  RegistryConflictError,
  RegistryInvalidError,
  RegistryNotFoundError,
} from "@moniro/registry";
import { Router } from "express";
import { deletedMessage } from "../agents/registry-catalog.js";
import type { RegistryLink } from "../agents/registry-link.js";
import { HttpError } from "../http/http-error.js";
import { methodNotAllowed } from "../http/method-not-allowed.js";
import { parseBody } from "../http/schema-body.js";
import type { AgentInspector, GatewayLogger } from "../ports.js";

/** An ephemeral agent without a name gets the first free `agent-<n>`; a lost race tries the next. */
const EPHEMERAL_ATTEMPTS = 20;

function view(record: AgentRecord) {
  return {
    name: record.name,
    revision: record.revision,
    source: record.source,
    updatedAt: record.updatedAt,
    ...(record.file !== undefined ? { file: record.file } : {}),
    definition: record.definition,
  };
}

function unknownAgent(registry: AgentRegistry, name: string): HttpError {
  const removed = registry.removed(name);
  const known = registry.names();
  return new HttpError(
    404,
    "unknown_agent",
    removed
      ? deletedMessage(name, removed)
      : `no agent named '${name}' is in the registry; known agents: ${known.length > 0 ? known.join(", ") : "none"}`,
  );
}

/** Registry errors → 400 / 404 / 409 naming what is wrong and how to fix it. */
function asHttpError(error: unknown, registry: AgentRegistry): unknown {
  if (error instanceof RegistryInvalidError) {
    return new HttpError(400, "invalid_definition", error.message, {}, { issues: error.issues });
  }
  if (error instanceof RegistryConflictError) {
    const code = error.kind === "exists" ? "agent_exists" : "revision_conflict";
    return new HttpError(409, code, error.message, {}, { revision: error.current ?? null });
  }
  if (error instanceof RegistryNotFoundError) return unknownAgent(registry, error.agent);
  if (error instanceof HttpError) return error;
  return new HttpError(
    503,
    "nats_unavailable",
    `the agent registry (NATS KV) did not take the change: ${(error as Error)?.message ?? error}; retry`,
    { "Retry-After": "2" },
  );
}

/** The path's agent name: a malformed one is unknown (404) when read, invalid (400) when written. */
function agentParam(value: string | string[] | undefined, writing = false): string {
  const name = typeof value === "string" ? value : "";
  if (NAME_PATTERN.test(name)) return name;
  const why = `'${name}' is not an agent name: names are 1-63 characters of a-z, 0-9, '-' and '_', starting with a letter or digit`;
  throw writing ? new HttpError(400, "invalid_definition", why) : new HttpError(404, "unknown_agent", why);
}

/**
 * Agent definitions in the live registry (docs/api.md "Agent definitions",
 * docs/registry.md): list with runtime state, read, apply (create or replace,
 * optionally at a revision), create (named, copied `from` another, or
 * ephemeral), delete. Schemas: @moniro/api agents.ts.
 */
export function agentDefinitionsRouter(deps: {
  registry: RegistryLink;
  inspector: AgentInspector;
  logger: GatewayLogger;
}): Router {
  const router = Router();

  router.get("/v1/agents", async (_request, response) => {
    const registry = await deps.registry.get();
    const records = registry.list();
    const names = records.map((record) => record.name);
    // The runtime state is a bonus: Redis away still lists the agents (state null).
    const states = await (deps.inspector.states?.(names) ?? Promise.resolve(names.map(() => null))).catch(
      (error: unknown) => {
        deps.logger.warn({ err: (error as Error)?.message }, "agent states unreadable; listing without them");
        return names.map(() => null);
      },
    );
    response.json({
      agents: records.map((record, index) => ({
        name: record.name,
        revision: record.revision,
        source: record.source,
        model: record.definition.model,
        updatedAt: record.updatedAt,
        state: states[index] ?? null,
      })),
    });
  });

  router.post("/v1/agents", async (request, response) => {
    const registry = await deps.registry.get();
    const body = parseBody(
      createAgentBodySchema,
      request.body,
      '{"name": "alice", "definition": {"model": "claude-sonnet-4-5"}}',
    );
    let base: Record<string, unknown> = {};
    if (body.from !== undefined) {
      const source = registry.get(body.from);
      if (!source) throw unknownAgent(registry, body.from);
      const { name: _name, ...fields } = source.definition;
      base = fields;
    }
    const definition = { ...base, ...(body.definition ?? {}) };
    delete definition.name;
    const source = body.ephemeral ? "ephemeral" : "api";
    const names = body.name !== undefined ? [body.name] : ephemeralNames(registry, EPHEMERAL_ATTEMPTS);
    for (const [index, name] of names.entries()) {
      try {
        const { record } = await registry.put(name, { ...definition, name }, { source, create: true });
        response.status(201).json(view(record));
        return;
      } catch (error) {
        // Another request took this `agent-<n>` first: the next one.
        if (body.name === undefined && error instanceof RegistryConflictError && index < names.length - 1) continue;
        throw asHttpError(error, registry);
      }
    }
  });
  router.all("/v1/agents", methodNotAllowed("GET", "POST"));

  router.get("/v1/agents/:agent/definition", async (request, response) => {
    const registry = await deps.registry.get();
    const name = agentParam(request.params.agent);
    const record = await registry.fetch(name);
    if (!record) throw unknownAgent(registry, name);
    response.json(view(record));
  });

  router.put("/v1/agents/:agent/definition", async (request, response) => {
    const registry = await deps.registry.get();
    const name = agentParam(request.params.agent, true);
    const body = parseBody(
      applyAgentBodySchema,
      request.body,
      '{"definition": {"model": "claude-sonnet-4-5"}, "ifRevision": 3}',
    );
    try {
      const { record, created } = await registry.put(name, body.definition, {
        source: "api",
        ifRevision: body.ifRevision,
      });
      response.status(created ? 201 : 200).json(view(record));
    } catch (error) {
      throw asHttpError(error, registry);
    }
  });
  router.all("/v1/agents/:agent/definition", methodNotAllowed("GET", "PUT"));

  router.delete("/v1/agents/:agent", async (request, response) => {
    const registry = await deps.registry.get();
    const name = agentParam(request.params.agent);
    const record = await registry.fetch(name);
    if (!record) throw unknownAgent(registry, name);
    if (record.source === "file") {
      throw new HttpError(
        409,
        "file_agent",
        /(^|[/\\])moniro\.ya?ml$/.test(record.file ?? "")
          ? `agent '${name}' is registered by ${record.file}, which would bring it back: remove it from that file's 'agents:' list instead`
          : `agent '${name}' is defined by the file ${record.file ?? `${name}.yaml`} of the project, which would bring it back: delete the file (or its ConfigMap key; with a moniro.yaml, remove it from its 'agents:' list) instead`,
      );
    }
    try {
      const removed = await registry.remove(name, { ifRevision: record.revision });
      response.json({ name, revision: removed.revision, deleted: true });
    } catch (error) {
      throw asHttpError(error, registry);
    }
  });

  return router;
}

/** Free `agent-<n>` names, lowest first. */
function ephemeralNames(registry: AgentRegistry, count: number): string[] {
  const taken = new Set(registry.names());
  const names: string[] = [];
  for (let n = 1; names.length < count; n++) if (!taken.has(`agent-${n}`)) names.push(`agent-${n}`);
  return names;
}
