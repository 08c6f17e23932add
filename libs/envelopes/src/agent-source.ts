import { z } from "zod";

/**
 * Where an agent definition in the registry came from: the agents directory,
 * the API, an ephemeral agent (`moniro new`), or a workflow's inline agent.
 */
export const AGENT_SOURCES = ["file", "api", "ephemeral", "workflow"] as const;
export const agentSourceSchema = z.enum(AGENT_SOURCES);
export type AgentSource = z.output<typeof agentSourceSchema>;
