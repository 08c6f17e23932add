import type { Lane } from "@moniro/envelopes";

/**
 * Redis key layout (DESIGN §4). Every service that touches Redis builds keys
 * here so the layout is written once. `prefix` defaults to `moniro:`; tests
 * use a random one and delete only their own keys.
 *
 * Stream entry encoding: thread and inbox entries are stored with one field
 * `e` holding the JSON of the record, decoded with libs/envelopes schemas.
 */
export function createKeys(prefix = "moniro:") {
  const agent = (a: string) => `${prefix}agent:${a}`;
  return {
    prefix,
    inbox: (a: string, lane: Lane) => `${agent(a)}:inbox:${lane}`,
    /** Set of agents with pending inbox entries (the sweeper's index). */
    pendingAgents: `${prefix}agents:pending`,
    /**
     * Set of agents whose state is not idle (running, paused, stopped,
     * error): with the pending set, the sweeper's work list — an agent whose
     * runner died or shut down mid-instruction may have nothing left in its inbox.
     */
    activeAgents: `${prefix}agents:active`,
    thread: (a: string, context: string) => `${agent(a)}:thread:${context}`,
    /** Set of envelope ids already written to a thread (exactly-once injection). */
    threadEnvelopes: (a: string, context: string) => `${agent(a)}:thread:${context}:envelopes`,
    /** Hash: compaction pointer and other per-thread metadata. */
    threadMeta: (a: string, context: string) => `${agent(a)}:thread:${context}:meta`,
    lease: (a: string) => `${agent(a)}:lease`,
    epoch: (a: string) => `${agent(a)}:epoch`,
    state: (a: string) => `${agent(a)}:state`,
    memory: (a: string) => `${agent(a)}:memory`,
    notes: (a: string) => `${agent(a)}:notes`,
    todo: (a: string) => `${agent(a)}:todo`,
    dedupe: (envelopeId: string) => `${prefix}dedupe:${envelopeId}`,
    channel: (workflow: string, tag: string) => `${prefix}ws:${workflow}:${tag}:channel`,
  };
}
export type Keys = ReturnType<typeof createKeys>;

/** The field name of a stream entry's JSON record. */
export const ENTRY_FIELD = "e";
