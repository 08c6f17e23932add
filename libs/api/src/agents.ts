import { agentSourceSchema, agentStateSchema, nameSchema } from "@moniro/envelopes";
import { z } from "zod";
import { error, UNAUTHORIZED } from "./error-responses.js";
import { type ApiRoute, defineRoute } from "./route.js";

/**
 * Agent definitions in the live registry (docs/registry.md, docs/api.md
 * "Agent definitions"): list, read, create, create-or-replace, delete. The
 * gateway validates request bodies with these schemas; a definition's own
 * fields are validated by @moniro/config's schema, whose errors name the field.
 */

const UNKNOWN_AGENT = error("no agent of that name is in the registry (`unknown_agent`); a deleted one says so");
const REGISTRY_DOWN = error("the registry (NATS KV) cannot be reached (`nats_unavailable`); retry after `Retry-After`");

export { AGENT_SOURCES, agentSourceSchema } from "@moniro/envelopes";

/**
 * An agent definition: the fields of `.agents/<name>.yaml` as JSON
 * (snake_case, docs/configuration.md). `prompt.system_file` is not accepted
 * here: inline the prompt as `prompt.system`.
 */
export const agentDefinitionBodySchema = z.record(z.string(), z.unknown(), {
  error: `must be an object of the agent's fields (those of .agents/<name>.yaml), e.g. {"model": "claude-sonnet-4-5"}`,
});

/** Optimistic concurrency: the revision the change was based on (0: the agent must not exist yet). */
const ifRevisionSchema = z
  .number({ error: "must be a number: the revision you read (GET …/definition), or 0 for 'must not exist'" })
  .int("must be a whole number")
  .min(0, "must be 0 or more");

/** One agent in the registry with its definition. */
export const agentRecordSchema = z.object({
  name: nameSchema,
  /** Changes with every write; send it back as `ifRevision` to update only what you read. */
  revision: z.number().int(),
  source: agentSourceSchema,
  /** ISO 8601 time of the last write. */
  updatedAt: z.string(),
  /** The agents-directory file of a `file` agent. */
  file: z.string().optional(),
  /** The stored definition, defaults filled in. */
  definition: agentDefinitionBodySchema,
});
export type AgentRecordView = z.output<typeof agentRecordSchema>;

/** One line of `GET /v1/agents`. */
export const agentSummarySchema = z.object({
  name: nameSchema,
  revision: z.number().int(),
  source: agentSourceSchema,
  model: z.string(),
  updatedAt: z.string(),
  /** The agent's runtime state from Redis; null when it never ran (or Redis did not answer). */
  state: agentStateSchema.nullable(),
});
export type AgentSummary = z.output<typeof agentSummarySchema>;

export const agentParamsSchema = z.object({ agent: nameSchema });

/** `PUT /v1/agents/:agent/definition` body. */
export const applyAgentBodySchema = z.strictObject({
  definition: agentDefinitionBodySchema,
  ifRevision: ifRevisionSchema.optional(),
});
export type ApplyAgentBody = z.input<typeof applyAgentBodySchema>;

/** `POST /v1/agents` body. */
export const createAgentBodySchema = z
  .strictObject({
    /** The new agent's name; an ephemeral agent without one is named `agent-<n>`. */
    name: nameSchema.optional(),
    definition: agentDefinitionBodySchema.optional(),
    /** Kept in memory only (NATS memory storage): gone when NATS restarts. */
    ephemeral: z.boolean().optional(),
    /** Copy this agent's definition (fields of `definition` override it). */
    from: nameSchema.optional(),
  })
  .superRefine((body, ctx) => {
    if (body.name === undefined && body.ephemeral !== true) {
      ctx.addIssue({
        code: "custom",
        path: ["name"],
        message: "is required (only an ephemeral agent is named for you)",
      });
    }
    if (body.definition === undefined && body.from === undefined) {
      ctx.addIssue({
        code: "custom",
        path: ["definition"],
        message: "is required: give the definition, or 'from' to copy an existing agent's",
      });
    }
  });
export type CreateAgentBody = z.input<typeof createAgentBodySchema>;

export const deleteAgentResultSchema = z.object({
  name: nameSchema,
  /** The revision the agent had when it was deleted. */
  revision: z.number().int(),
  deleted: z.literal(true),
});

export const listAgents = defineRoute({
  id: "listAgents",
  method: "get",
  path: "/v1/agents",
  summary: "List the agents of the registry with their runtime state",
  responses: {
    200: { description: "every agent, by name", schema: z.object({ agents: z.array(agentSummarySchema) }) },
    401: UNAUTHORIZED,
    503: REGISTRY_DOWN,
  },
});

export const getAgentDefinition = defineRoute({
  id: "getAgentDefinition",
  method: "get",
  path: "/v1/agents/:agent/definition",
  summary: "Read an agent's definition and revision",
  params: agentParamsSchema,
  responses: {
    200: { description: "the agent's registry record", schema: agentRecordSchema },
    401: UNAUTHORIZED,
    404: UNKNOWN_AGENT,
    503: REGISTRY_DOWN,
  },
});

export const applyAgent = defineRoute({
  id: "applyAgent",
  method: "put",
  path: "/v1/agents/:agent/definition",
  summary: "Create or replace an agent's definition (kubectl apply)",
  params: agentParamsSchema,
  body: applyAgentBodySchema,
  responses: {
    200: { description: "replaced", schema: agentRecordSchema },
    201: { description: "created", schema: agentRecordSchema },
    400: error(
      "the body or the definition is invalid (`invalid_body`, `invalid_definition`); `details.issues` names each field",
    ),
    401: UNAUTHORIZED,
    409: error(
      "the agent is not at `ifRevision` (`revision_conflict`, `details.revision` is the current one), or is ephemeral (`agent_exists`)",
    ),
    503: REGISTRY_DOWN,
  },
});

export const createAgent = defineRoute({
  id: "createAgent",
  method: "post",
  path: "/v1/agents",
  summary: "Create an agent (from a definition, a copy of another, or ephemeral)",
  body: createAgentBodySchema,
  responses: {
    201: { description: "created", schema: agentRecordSchema },
    400: error(
      "the body or the definition is invalid (`invalid_body`, `invalid_definition`); the message names the field",
    ),
    401: UNAUTHORIZED,
    404: error("`from` names no agent (`unknown_agent`)"),
    409: error("an agent of that name exists (`agent_exists`)"),
    503: REGISTRY_DOWN,
  },
});

export const deleteAgent = defineRoute({
  id: "deleteAgent",
  method: "delete",
  path: "/v1/agents/:agent",
  summary: "Delete an agent: its cycle under way finishes, later input is refused, its sub-agents are canceled",
  params: agentParamsSchema,
  responses: {
    200: { description: "deleted", schema: deleteAgentResultSchema },
    401: UNAUTHORIZED,
    404: UNKNOWN_AGENT,
    409: error(
      "the agent is defined by a file (`file_agent`): remove the file from the agents directory, or the agent from moniro.yaml",
    ),
    503: REGISTRY_DOWN,
  },
});

/** Routes of this area (see README.md for which area holds what). */
export const agentsRoutes: readonly ApiRoute[] = [listAgents, getAgentDefinition, applyAgent, createAgent, deleteAgent];
