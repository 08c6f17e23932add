import type { Lane } from "@moniro/envelopes";

/**
 * Redis key layout (DESIGN §4), written once for every service. The shape is
 * `<prefix>{a:<agent>}:<fixed word>[:<user token>]` for an agent's keys and
 * `<prefix>{w:<workflow>:<tag>}:<fixed word>` for a workspace's:
 *
 * - the braces are a Redis Cluster hash tag, so every key of one agent (and
 *   of one workspace) lives in one slot and each Lua script touches one slot;
 * - a user-chosen token (agent, workflow, tag: `[a-z0-9_-]`, no `:` or
 *   braces) sits inside the tag, and the only other user token (a thread's
 *   context, an envelope id) comes last, after a fixed word that no other key
 *   uses, so no name can form another key (`thread-meta:personal` is the
 *   meta of `personal`, `thread:personal:meta` a thread of its own).
 *
 * The sweeper's indexes (`agents:pending`, `agents:active`) have no tag: they
 * are global and never touched in the same script as an agent's keys.
 * `prefix` defaults to `moniro:` and may not contain braces (it would move
 * the hash tag); tests use a random one and delete only their own keys.
 *
 * Stream entry encoding: thread and inbox entries are stored with one field
 * `e` holding the JSON of the record, decoded with libs/envelopes schemas.
 */
export function createKeys(prefix = "moniro:") {
  if (/[{}]/.test(prefix)) {
    throw new Error(
      `Redis key prefix '${prefix}' may not contain '{' or '}': the layout puts its own hash tag after it`,
    );
  }
  const agent = (a: string) => `${prefix}{a:${a}}`;
  return {
    prefix,
    inbox: (a: string, lane: Lane) => `${agent(a)}:inbox:${lane}`,
    /**
     * Stream of inbox entries that could not be decoded nor moved to the DLQ (NATS refused):
     * kept here, out of the lanes, so the agent goes on (redis-inbox.ts).
     */
    inboxQuarantine: (a: string) => `${agent(a)}:inbox-quarantine`,
    /** Set of agents that may have pending inbox entries (the sweeper's index; a superset, see redis-inbox.ts). */
    pendingAgents: `${prefix}agents:pending`,
    /**
     * Set of agents whose state is not idle (running, paused, stopped,
     * error): with the pending set, the sweeper's work list — an agent whose
     * runner died or shut down mid-instruction may have nothing left in its inbox.
     */
    activeAgents: `${prefix}agents:active`,
    thread: (a: string, context: string) => `${agent(a)}:thread:${context}`,
    /** The start of every thread stream key of one agent (the context follows). */
    threadPrefix: (a: string) => `${agent(a)}:thread:`,
    /** Set of envelope ids already written to a thread (exactly-once injection). */
    threadEnvelopes: (a: string, context: string) => `${agent(a)}:thread-envelopes:${context}`,
    /** Hash: compaction pointer and other per-thread metadata. */
    threadMeta: (a: string, context: string) => `${agent(a)}:thread-meta:${context}`,
    lease: (a: string) => `${agent(a)}:lease`,
    epoch: (a: string) => `${agent(a)}:epoch`,
    state: (a: string) => `${agent(a)}:state`,
    memory: (a: string) => `${agent(a)}:memory`,
    notes: (a: string) => `${agent(a)}:notes`,
    todo: (a: string) => `${agent(a)}:todo`,
    /** Counter: bumped by every write to memory, notes or todos (the prompt snapshot's cache check). */
    contextVersion: (a: string) => `${agent(a)}:context-version`,
    /** Counter: the last todo id handed out (ids are short numbers a person can type). */
    todoSeq: (a: string) => `${agent(a)}:todo-seq`,
    /** Set of tool-executor ids that run background processes of the agent. */
    processExecutors: (a: string) => `${agent(a)}:process-executors`,
    /** Hash: a sub-agent's record (parent, call, status, its definition as JSON, report, usage). */
    subagent: (a: string) => `${agent(a)}:subagent`,
    /** Set: the live sub-agents of a parent. */
    children: (a: string) => `${agent(a)}:children`,
    /** Hash: token use of a parent's ended sub-agents, rolled up (inputTokens, outputTokens, children). */
    childUsage: (a: string) => `${agent(a)}:child-usage`,
    /** An inbound envelope id already appended for this agent (dedupe, with a TTL). */
    dedupe: (a: string, envelopeId: string) => `${agent(a)}:dedupe:${envelopeId}`,
    channel: (workflow: string, tag: string) => workspaceKeys(prefix, workflow, tag).channel,
    /** Every key of one workflow instance (docs/redis-keys.md). */
    workspace: (workflow: string, tag: string) => workspaceKeys(prefix, workflow, tag),
    /** Set of `<workflow>:<tag>` instances that have state (running, or stopped and kept): a global index. */
    workspaces: `${prefix}workspaces`,
    /**
     * The scheduler's BullMQ key prefix (BullMQ adds `:<queue>:…`): the prefix without its trailing
     * ':', then the hash tag `{bull}`, so each queue's keys share one Redis Cluster slot.
     */
    bullPrefix: `${prefix.endsWith(":") ? prefix.slice(0, -1) : prefix}:{bull}`,
  };
}

/**
 * The keys of one workflow instance, all under the hash tag
 * `{w:<workflow>:<tag>}` (one slot: every script of a workspace runs on a
 * cluster). Member names, document names and proposal ids are hash fields
 * or sorted-set members, never parts of a key, so the set of keys is fixed.
 */
function workspaceKeys(prefix: string, workflow: string, tag: string) {
  const base = `${prefix}{w:${workflow}:${tag}}`;
  return {
    /** Hash: status (running | stopped), createdAt, startedAt, stoppedAt, proposalSeq. */
    state: `${base}:state`,
    /** Hash: member name → JSON { agent, kind, role }. */
    members: `${base}:members`,
    /** Stream: the channel, field `e` = JSON { from, text, mentions, at }; append-only. */
    channel: `${base}:channel`,
    /** Hash: member name → the id of the last channel entry the member has seen. */
    seen: `${base}:seen`,
    /** Sorted set (all scores 0, read by lex range): `<member>:<padded entry id>` per unread @mention. */
    mentions: `${base}:mentions`,
    /** Hash: document name → text. */
    docs: `${base}:docs`,
    /** Hash: document name → JSON { version, bytes, updatedBy, updatedAt }. */
    docMeta: `${base}:doc-meta`,
    /** Hash: proposal id → JSON { id, title, options, createdBy, createdAt, voters } (never changes). */
    proposals: `${base}:proposals`,
    /** Hash: proposal id → JSON { status: open | decided | tied, result, closedAt }. */
    proposalStatus: `${base}:proposal-status`,
    /** Hash: `<proposal id>:<member>` → the option voted for. */
    votes: `${base}:votes`,
    /** String: the gateways' lock on the instance's start and stop (a token, with a lease). */
    lifecycle: `${base}:lifecycle`,
    /**
     * Set of tool-executor ids that started a background process in the instance's context: its stop
     * asks each to stop them (docs/tool-executor.md); deleted by the executor that removes its directory.
     */
    processExecutors: `${base}:process-executors`,
  };
}
export type WorkspaceKeys = ReturnType<typeof workspaceKeys>;
export type Keys = ReturnType<typeof createKeys>;

/** The field name of a stream entry's JSON record. */
export const ENTRY_FIELD = "e";
