import type { DlqIssue, InboundEnvelope, Lane } from "@moniro/envelopes";
import { LANES } from "@moniro/envelopes";
import type { AppendOptions, Clock, Fence, Inbox, InboxItem, WorkspaceRefusal } from "@moniro/ports";
import { systemClock } from "@moniro/ports";
import { decodeInboxRecord, encodeInboxRecord, fieldValue, type InboxRecord } from "./codec.js";
import { corruptEntry, errorFromCode, SCRIPT_ERROR_CODES, type StoreError } from "./errors.js";
import type { Keys } from "./keys.js";
import { createKeys, ENTRY_FIELD } from "./keys.js";
import { isCluster, type RedisClient } from "./redis-client.js";
import { leaseValue } from "./redis-lease.js";
import { runScript } from "./scripts/loader.js";
import { checkInstance } from "./workspace/workspace-context.js";
import { WORKSPACE_SCRIPT_CODES } from "./workspace/workspace-error.js";
import { WrittenRecords } from "./written-records.js";

/** The consumer group on every inbox lane stream. */
export const INBOX_GROUP = "loop";
/**
 * The one consumer of an agent's inbox. Only the lease holder runs the loop,
 * so every runner reads under the same name: a runner taking over an agent
 * gets the entries its dead predecessor read but never acknowledged.
 */
export const INBOX_CONSUMER = "agent";

export const DEFAULT_DEDUPE_TTL_SECONDS = 24 * 60 * 60;

export interface RedisInboxOptions {
  /** Key prefix (default `moniro:`). */
  prefix?: string;
  /** Stamps `enqueuedAt` of new inputs. */
  clock?: Clock;
  /** How long an envelope id is remembered for dedupe (default 24 h). */
  dedupeTtlSeconds?: number;
  /**
   * Called for an entry that cannot be decoded (written by something else, or
   * not as the thread could read it back). Given a handler, the entry is
   * handed to it with its raw bytes (a runner moves it to the DLQ) and removed
   * once the handler's promise resolves, so one bad record cannot block the
   * agent and none is dropped unseen. When the handler throws (the DLQ is
   * unreachable), the entry is moved to the agent's quarantine stream
   * (`keys.inboxQuarantine`, with its lane, entry id and the reason) and
   * `onQuarantined` is told. Without a handler, `pending` throws.
   */
  onCorruptEntry?: (entry: CorruptInboxEntry) => void | Promise<void>;
  /** An undecodable entry its handler could not take, kept in `key` (the agent's quarantine stream). */
  onQuarantined?: (entry: CorruptInboxEntry, details: { key: string; reason: string }) => void;
  /**
   * Called for an entry kept although the current inbound schema refuses its
   * envelope (queued by a version whose schema was less strict: decodeInboxRecord).
   */
  onRefusedEnvelope?: (details: { key: string; entryId: string; reason: string }) => void;
}

/** An inbox entry that cannot be decoded, as `onCorruptEntry` gets it. */
export interface CorruptInboxEntry {
  agent: string;
  lane: Lane;
  entryId: string;
  /** The entry's record (field `e`) as stored; undefined when it has none. */
  raw: string | undefined;
  /** What is wrong, one issue per field where the schema says so. */
  issues: DlqIssue[];
  error: StoreError;
}

/**
 * The agent's inbox over Redis streams (DESIGN §4): one stream per lane
 * `{a:<a>}:inbox:<lane>` with a consumer group, entries `{ e: JSON }`.
 * Acknowledged entries are deleted, so a stream holds exactly the pending
 * inputs and its length is the lane's depth.
 *
 * The pending-agents index (`agents:pending`, the sweeper's list) is a
 * global key, so it is never in the same script as the agent's keys (on a
 * cluster they are in different slots). An append adds the agent together
 * with the entry (one round trip; on a single Redis the entry is written
 * first, on a cluster either may land first), also for a duplicate, so a
 * retried append repairs one that failed half-way. An ack that empties the
 * lanes removes the agent. An append racing that ack may be left out of the
 * index, which loses nothing: its producer wakes the agent once both writes
 * are done (it takes the lease if the holder has let go), only the lease
 * holder acks and its run ends only through `releaseIdle`, which looks at the
 * lanes atomically with the lease release, and a dying holder leaves its
 * agent in the active-agents index. What a process dying half-way through
 * these steps can still leave out, the runtime's reconciliation over every
 * defined agent finds (`depth`). On a single Redis, where slots do not
 * matter, the index is written inside the same scripts (`*Indexed`): no
 * extra command per input, and no gap between the entry and the index.
 */
export class RedisInbox implements Inbox {
  private readonly keys: Keys;
  private readonly clock: Clock;
  private readonly dedupeTtlSeconds: number;
  /** Single Redis: the index is written by the scripts themselves. */
  private readonly indexInScripts: boolean;
  /** What this process wrote lately: read back without a parse (see WrittenRecords). */
  private readonly written = new WrittenRecords();

  constructor(
    private readonly redis: RedisClient,
    private readonly options: RedisInboxOptions = {},
  ) {
    this.keys = createKeys(options.prefix);
    this.clock = options.clock ?? systemClock;
    this.dedupeTtlSeconds = options.dedupeTtlSeconds ?? DEFAULT_DEDUPE_TTL_SECONDS;
    this.indexInScripts = !isCluster(redis);
  }

  async append(envelope: InboundEnvelope, options: AppendOptions = {}): Promise<{ duplicate: boolean }> {
    const lane = options.lane ?? envelope.priority;
    const record = this.recordOf(envelope, options);
    const keys = [this.keys.dedupe(envelope.agent, envelope.id), this.keys.inbox(envelope.agent, lane)];
    if (this.indexInScripts) {
      const result = await runScript(
        this.redis,
        "appendInboxIndexed",
        [...keys, this.keys.pendingAgents],
        [record, INBOX_GROUP, this.dedupeTtlSeconds, envelope.agent],
      );
      return { duplicate: result === 0 };
    }
    // The index with the entry, also for a duplicate (see the class comment).
    const [result] = await Promise.all([
      runScript(this.redis, "appendInbox", keys, [record, INBOX_GROUP, this.dedupeTtlSeconds]),
      this.markPending(envelope.agent),
    ]);
    return { duplicate: result === 0 };
  }

  /**
   * `append` of an input in a workspace context, taken only while the
   * instance runs and the agent plays one of its members: the check and the
   * append in one script (`appendInboxMember-5.lua`), nothing written when
   * refused. Undefined on a Redis Cluster, where the workspace's keys are in
   * another slot: check with a read of its own there, then `append`.
   */
  appendAsMember(
    envelope: InboundEnvelope,
    workspace: { workflow: string; tag: string },
    options: AppendOptions = {},
  ): Promise<{ duplicate: boolean } | { refused: WorkspaceRefusal }> | undefined {
    if (!this.indexInScripts) return undefined;
    // The names become key parts (as RedisWorkspaceStore.instance checks them): a WorkspaceError otherwise.
    checkInstance(workspace.workflow, workspace.tag);
    const lane = options.lane ?? envelope.priority;
    const record = this.recordOf(envelope, options);
    const instance = this.keys.workspace(workspace.workflow, workspace.tag);
    const keys = [
      this.keys.dedupe(envelope.agent, envelope.id),
      this.keys.inbox(envelope.agent, lane),
      this.keys.pendingAgents,
      instance.state,
      instance.members,
    ];
    return runScript(this.redis, "appendInboxMember", keys, [
      record,
      INBOX_GROUP,
      this.dedupeTtlSeconds,
      envelope.agent,
    ]).then((result) => {
      if (result === WORKSPACE_SCRIPT_CODES.notRunning) return { refused: "workflow_not_running" as const };
      if (result === WORKSPACE_SCRIPT_CODES.notAMember) return { refused: "not_a_participant" as const };
      return { duplicate: result === 0 };
    });
  }

  private recordOf(envelope: InboundEnvelope, options: AppendOptions): string {
    return this.encode({
      envelope,
      enqueuedAt: options.enqueuedAt ?? this.clock.now(),
      preemptions: options.preemptions ?? 0,
      ...(options.traceparent ? { traceparent: options.traceparent } : {}),
    });
  }

  private encode(record: InboxRecord): string {
    const json = encodeInboxRecord(record);
    this.written.remember(json, record);
    return json;
  }

  async pending(agent: string): Promise<InboxItem[]> {
    const reply = await runScript(this.redis, "readInbox", this.laneKeys(agent), [INBOX_GROUP, INBOX_CONSUMER]);
    const lanes = reply as Array<Array<string | null>>;
    const items: InboxItem[] = [];
    const corrupt: CorruptInboxEntry[] = [];
    for (const [index, lane] of LANES.entries()) {
      const flat = lanes[index] ?? [];
      for (let i = 0; i + 1 < flat.length; i += 2) {
        const entryId = String(flat[i]);
        const json = flat[i + 1];
        const known = typeof json === "string" ? this.written.get(json) : undefined;
        if (known) {
          items.push({ entryId, lane, ...known });
          continue;
        }
        const decoded = typeof json === "string" ? decodeInboxRecord(json) : undefined;
        if (decoded?.ok) {
          if (decoded.refused) this.reportRefused(this.keys.inbox(agent, lane), entryId, decoded.refused.message);
          items.push({ entryId, lane, ...decoded.value });
          continue;
        }
        const error = corruptEntry(
          this.keys.inbox(agent, lane),
          entryId,
          decoded ? decoded.error.message : `no field '${ENTRY_FIELD}'`,
        );
        if (!this.options.onCorruptEntry) throw error;
        const issues = decoded ? decoded.error.issues : [{ path: ENTRY_FIELD, message: "missing" }];
        corrupt.push({ agent, lane, entryId, raw: typeof json === "string" ? json : undefined, issues, error });
      }
    }
    if (corrupt.length > 0) await this.handOver(agent, corrupt);
    return items;
  }

  /** Entries kept though today's schema refuses them, reported once each (not at every read). */
  private readonly refusedSeen = new Set<string>();

  private reportRefused(key: string, entryId: string, reason: string): void {
    const seen = `${key} ${entryId}`;
    if (this.refusedSeen.has(seen)) return;
    if (this.refusedSeen.size >= 1_000) this.refusedSeen.clear();
    this.refusedSeen.add(seen);
    this.options.onRefusedEnvelope?.({ key, entryId, reason });
  }

  /**
   * Undecodable entries out of the lanes: each handed to `onCorruptEntry` (the DLQ) and then
   * removed, or, when the handler throws, moved to the quarantine stream (never dropped, and
   * never left in a lane where it would keep the agent from going idle).
   */
  private async handOver(agent: string, corrupt: readonly CorruptInboxEntry[]): Promise<void> {
    const handler = this.options.onCorruptEntry;
    if (!handler) return;
    const outcomes = await Promise.allSettled(corrupt.map(async (entry) => handler(entry)));
    const handed = corrupt.filter((_, index) => outcomes[index]?.status === "fulfilled");
    const key = this.keys.inboxQuarantine(agent);
    for (const [index, outcome] of outcomes.entries()) {
      if (outcome.status === "fulfilled") continue;
      const entry = corrupt[index] as CorruptInboxEntry;
      const failure = outcome.reason instanceof Error ? outcome.reason.message : String(outcome.reason);
      const reason = `${entry.error.message}; not handed to the DLQ: ${failure}`;
      await runScript(
        this.redis,
        "quarantineInbox",
        [this.keys.inbox(agent, entry.lane), key],
        [INBOX_GROUP, entry.entryId, reason],
      );
      this.options.onQuarantined?.(entry, { key, reason });
    }
    // A replay of a moved one from the DLQ must not read as a duplicate.
    await this.forget(
      agent,
      handed.flatMap((entry) => envelopeIdOf(entry.raw)),
    );
    // The acks also keep the pending-agents index (quarantined entries left the lanes too).
    await this.remove(agent, handed);
  }

  /**
   * The agent's quarantined entries handed to `onCorruptEntry` again (the DLQ may take them
   * now), oldest first, at most `limit`: each one the handler takes is deleted from the
   * quarantine stream; the first it refuses stops the retry (the DLQ is still down), that
   * entry and the rest stay. Each is handed over as it was when it left its lane (lane, entry
   * id, record, issues), so its DLQ record's msg id is the one a first attempt used and an
   * attempt that did store it before is not stored twice.
   */
  async retryQuarantined(agent: string, limit = 100): Promise<{ moved: number; left: number; failure?: string }> {
    const key = this.keys.inboxQuarantine(agent);
    const handler = this.options.onCorruptEntry;
    const entries = handler ? await this.redis.xrange(key, "-", "+", "COUNT", limit) : [];
    let moved = 0;
    let failure: string | undefined;
    for (const [id, fields] of entries) {
      const entry = this.quarantinedEntry(agent, fields);
      try {
        await handler?.(entry);
      } catch (error) {
        failure = error instanceof Error ? error.message : String(error);
        break;
      }
      await this.forget(agent, envelopeIdOf(entry.raw));
      await this.redis.xdel(key, id);
      moved++;
    }
    const left = await this.redis.xlen(key);
    return failure === undefined ? { moved, left } : { moved, left, failure };
  }

  /** A quarantine stream entry (`quarantineInbox-2.lua`: lane key, entry id, reason, the entry's fields) as it left its lane. */
  private quarantinedEntry(agent: string, fields: readonly string[]): CorruptInboxEntry {
    const field = (name: string) => {
      for (let i = 0; i + 1 < fields.length; i += 2) if (fields[i] === name) return fields[i + 1];
      return undefined;
    };
    const laneKey = field("lane") ?? "";
    const lane = LANES.find((one) => this.keys.inbox(agent, one) === laneKey) ?? "normal";
    const entryId = field("entry") ?? "";
    const raw = field(ENTRY_FIELD);
    const decoded = raw === undefined ? undefined : decodeInboxRecord(raw);
    // A record today's code reads (a later version's schema) goes to the DLQ too, for an operator to replay.
    const issues = decoded ? (decoded.ok ? [] : decoded.error.issues) : [{ path: ENTRY_FIELD, message: "missing" }];
    const reason = decoded
      ? decoded.ok
        ? (field("reason") ?? "quarantined")
        : decoded.error.message
      : `no field '${ENTRY_FIELD}'`;
    return { agent, lane, entryId, raw, issues, error: corruptEntry(laneKey, entryId, reason) };
  }

  async ack(agent: string, items: readonly InboxItem[]): Promise<void> {
    if (items.length === 0) return;
    await this.remove(agent, items);
  }

  /**
   * The dedupe keys go first: a process dying in between leaves the entries in the lanes, to be
   * moved again (their DLQ records' msg ids dedupe that), never an entry gone with its id still
   * refusing its replay.
   */
  async discard(agent: string, items: readonly InboxItem[]): Promise<void> {
    if (items.length === 0) return;
    await this.forget(
      agent,
      items.map((item) => item.envelope.id),
    );
    await this.remove(agent, items);
  }

  /** Deletes the dedupe keys of envelope ids whose inputs left the inbox for the DLQ (one slot: `{a:<a>}`). */
  private async forget(agent: string, envelopeIds: readonly string[]): Promise<void> {
    if (envelopeIds.length > 0) await this.redis.del(...envelopeIds.map((id) => this.keys.dedupe(agent, id)));
  }

  async requeue(fence: Fence, item: InboxItem, changes: { lane?: Lane; preemptions?: number }): Promise<InboxItem> {
    const { agent } = fence;
    const lane = changes.lane ?? item.lane;
    const record = {
      envelope: item.envelope,
      enqueuedAt: item.enqueuedAt,
      preemptions: changes.preemptions ?? item.preemptions,
      ...(item.traceparent ? { traceparent: item.traceparent } : {}),
    };
    const keys = [this.keys.lease(agent), this.keys.inbox(agent, item.lane), this.keys.inbox(agent, lane)];
    const args = [leaseValue(fence), INBOX_GROUP, item.entryId, this.encode(record)];
    const script = this.indexInScripts ? "requeueInboxIndexed" : "requeueInbox";
    const [entryId] = this.indexInScripts
      ? [await runScript(this.redis, script, [...keys, this.keys.pendingAgents], [...args, agent])]
      : await Promise.all([runScript(this.redis, script, keys, args), this.markPending(agent)]);
    if (entryId === SCRIPT_ERROR_CODES.leaseLost) throw errorFromCode(entryId, { script, agent, epoch: fence.epoch });
    return { entryId: String(entryId), lane, ...record };
  }

  async depth(agent: string): Promise<Record<Lane, number>> {
    const counts = (await runScript(this.redis, "depthInbox", this.laneKeys(agent), [])) as number[];
    return { immediate: Number(counts[0] ?? 0), normal: Number(counts[1] ?? 0), background: Number(counts[2] ?? 0) };
  }

  /** The pending-agents index: every agent with pending entries, and possibly some whose entries just went. */
  async agentsWithPending(): Promise<string[]> {
    return (await this.redis.smembers(this.keys.pendingAgents)).sort();
  }

  /** Adds the agent to the pending-agents index (after its entry is written). */
  async markPending(agent: string): Promise<void> {
    await this.redis.sadd(this.keys.pendingAgents, agent);
  }

  /**
   * The pending items without reading them as the agent's consumer (for
   * inspection: the gateway's queue view). Corrupt entries are left out.
   */
  async peek(agent: string): Promise<InboxItem[]> {
    const items: InboxItem[] = [];
    for (const lane of LANES) {
      for (const [entryId, fields] of await this.redis.xrange(this.keys.inbox(agent, lane), "-", "+")) {
        const json = fieldValue(fields, ENTRY_FIELD);
        const decoded = json === undefined ? undefined : decodeInboxRecord(json);
        if (decoded?.ok) items.push({ entryId, lane, ...decoded.value });
      }
    }
    return items;
  }

  /**
   * Deletes the agent's lane streams if, and only if, every one is empty (atomically): removing an
   * agent's keys ends with this, so an input appended after its inbox was moved to the DLQ is not
   * deleted with them. False: an input waits, nothing was deleted.
   */
  async deleteIfEmpty(agent: string): Promise<boolean> {
    return Number(await runScript(this.redis, "deleteEmptyInbox", this.laneKeys(agent), [])) === 1;
  }

  /** The agent's three lane stream keys, in lane order. */
  laneKeys(agent: string): string[] {
    return LANES.map((lane) => this.keys.inbox(agent, lane));
  }

  private async remove(agent: string, items: ReadonlyArray<Pick<InboxItem, "lane" | "entryId">>): Promise<void> {
    const pairs = items.flatMap((item) => [LANES.indexOf(item.lane) + 1, item.entryId]);
    if (this.indexInScripts) {
      const keys = [...this.laneKeys(agent), this.keys.pendingAgents];
      await runScript(this.redis, "ackInboxIndexed", keys, [INBOX_GROUP, agent, ...pairs]);
      return;
    }
    const left = await runScript(this.redis, "ackInbox", this.laneKeys(agent), [INBOX_GROUP, ...pairs]);
    // Emptied: out of the index (see the class comment for an append racing this).
    if (Number(left) === 0) await this.redis.srem(this.keys.pendingAgents, agent);
  }
}

/** The envelope id in an undecodable record, when it has a string one (its dedupe key is the agent's). */
function envelopeIdOf(raw: string | undefined): string[] {
  if (raw === undefined) return [];
  try {
    const id = (JSON.parse(raw) as { envelope?: { id?: unknown } } | null)?.envelope?.id;
    return typeof id === "string" && id !== "" ? [id] : [];
  } catch {
    return [];
  }
}
