import type { ScheduleStore } from "./schedule-store.js";

/**
 * Makes the heartbeat schedulers match the agents' configuration: one per
 * agent that asks for it, none for the others (an agent whose heartbeat was
 * removed from its YAML stops getting one).
 */
export async function syncHeartbeats(store: ScheduleStore, wanted: ReadonlyMap<string, number>): Promise<void> {
  for (const agent of await store.heartbeatAgents()) {
    if (!wanted.has(agent)) await store.setHeartbeat(agent, undefined);
  }
  for (const [agent, everyMs] of wanted) await store.setHeartbeat(agent, everyMs);
}
