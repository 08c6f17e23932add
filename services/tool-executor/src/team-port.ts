import { join } from "node:path";
import type { InboundEnvelope } from "@moniro/envelopes";
import { RedisAgentStateStore, type RedisClient, RedisWorkspaceStore } from "@moniro/store";
import type { TeamPort } from "@moniro/tool-catalog";

/** The shared directory of an instance: `<workspacesRoot>/<workflow>__<tag>` (names are validated tokens). */
export function sharedDirectoryOf(workspacesRoot: string, workflow: string, tag: string): string {
  return join(workspacesRoot, `${workflow}__${tag}`);
}

/**
 * The team tools' port over Redis (instance state, channel, documents,
 * proposals, agent states) and JetStream (`<ns>.in.<agent>` for the inputs a
 * post or a vote pushes).
 */
export function teamPortOver(options: {
  redis: RedisClient;
  redisPrefix: string;
  workspacesRoot: string;
  publish(envelope: InboundEnvelope): Promise<void>;
}): TeamPort {
  const store = new RedisWorkspaceStore(options.redis, { prefix: options.redisPrefix });
  const states = new RedisAgentStateStore(options.redis, { prefix: options.redisPrefix });
  return {
    store,
    publishInbound: options.publish,
    agentState: async (agent) => (await states.get(agent))?.state,
    directoryOf: (workflow, tag) => sharedDirectoryOf(options.workspacesRoot, workflow, tag),
  };
}
