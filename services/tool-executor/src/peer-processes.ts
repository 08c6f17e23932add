import type { Bus } from "@moniro/bus";
import { requestFailure } from "@moniro/bus";
import type { Subjects } from "@moniro/envelopes";
import {
  decode,
  TOOL_LOST_AFTER_MS,
  type ToolCallEnvelope,
  toolResultEnvelopeSchema,
  toolResultText,
} from "@moniro/envelopes";
import { createKeys, type RedisClient, runScript, splitContext } from "@moniro/store";
import type { PeerProcessListing, ProcessPeers } from "@moniro/tool-catalog";

/** The slice of the executor's shared dependencies this needs. */
export interface PeerProcessDeps {
  executorId: string;
  bus: Pick<Bus, "request">;
  subjects: Subjects;
  redis: RedisClient;
  redisPrefix: string;
  now?: () => number;
}

/** Longest wait for one other executor's process list. */
const PEER_TIMEOUT_MS = 5_000;

/**
 * Redis set `<prefix>{a:<agent>}:process-executors` (`@moniro/store`'s
 * layout): the executors that started a background process for the agent.
 * An executor that no longer exists is taken out when a \`list\` finds it gone.
 */
export function ownerIndexKey(prefix: string, agent: string): string {
  return createKeys(prefix).processExecutors(agent);
}

/** Redis set `<prefix>{w:<workflow>:<tag>}:process-executors`: the executors that started a process in the instance's context. */
export function instanceIndexKey(prefix: string, workflow: string, tag: string): string {
  return createKeys(prefix).workspace(workflow, tag).processExecutors;
}

/** `process` start/list across executors for one call (see ToolContext.processPeers). */
export function processPeersFor(call: ToolCallEnvelope, deps: PeerProcessDeps): ProcessPeers {
  return {
    announce: async () => {
      const names = splitContext(call.context);
      await Promise.all([
        deps.redis.sadd(ownerIndexKey(deps.redisPrefix, call.agent), deps.executorId),
        // In a workspace context: the instance's stop asks this executor to stop its processes there. Added
        // only while the instance runs (one script, the same round trip): a start announcing itself after the
        // stop read and deleted the set recreates nothing (its re-read after the spawn kills its process).
        ...(names === undefined
          ? []
          : [
              runScript(
                deps.redis,
                "announceProcess",
                [
                  createKeys(deps.redisPrefix).workspace(names.workflow, names.tag).state,
                  instanceIndexKey(deps.redisPrefix, names.workflow, names.tag),
                ],
                [deps.executorId],
              ),
            ]),
      ]);
    },
    list: () => listPeerProcesses(call, deps),
  };
}

/**
 * The agent's background processes on the other executors that started some
 * (the Redis owner index), each asked on `moniro.tool.proc.<executorId>` in
 * parallel. An executor that no longer exists is taken out of the index and
 * reported once (its processes ended with it); one that does not answer in
 * time is reported as such.
 */
export async function listPeerProcesses(call: ToolCallEnvelope, deps: PeerProcessDeps): Promise<PeerProcessListing[]> {
  const now = deps.now ?? Date.now;
  const key = ownerIndexKey(deps.redisPrefix, call.agent);
  const peers = (await deps.redis.smembers(key)).filter((id) => id !== deps.executorId).sort();
  return Promise.all(
    peers.map(async (executorId): Promise<PeerProcessListing> => {
      const subject = deps.subjects.toolProc(executorId);
      const timeoutMs = Math.max(1, Math.min(PEER_TIMEOUT_MS, call.deadlineMs - now()));
      let bytes: Uint8Array;
      try {
        bytes = await deps.bus.request(
          subject,
          { ...call, input: { action: "list" } },
          { timeoutMs, idleMs: TOOL_LOST_AFTER_MS },
        );
      } catch (error) {
        if (requestFailure(error) === "no-responders") {
          await deps.redis.srem(key, executorId);
          return { executorId, error: "this executor is gone, and the processes it ran ended with it" };
        }
        return { executorId, error: `did not answer within ${timeoutMs} ms; its processes may still be running` };
      }
      const decoded = decode(toolResultEnvelopeSchema, bytes, "tool result");
      if (!decoded.ok) return { executorId, error: `answered with an invalid result (${decoded.error.message})` };
      if (decoded.value.isError) return { executorId, error: toolResultText(decoded.value) };
      const processes = (decoded.value.data as { processes?: unknown } | undefined)?.processes;
      return { executorId, processes: Array.isArray(processes) ? (processes as Array<Record<string, unknown>>) : [] };
    }),
  );
}
