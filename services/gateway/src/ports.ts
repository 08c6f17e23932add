import type {
  ControlReply,
  InboundEnvelope,
  Lane,
  SchedulerReply,
  SchedulerRequestInput,
  ThreadEntry,
} from "@moniro/envelopes";
import type { AgentStateRecord } from "@moniro/ports";
import type { StreamGap } from "./http/gap-frame.js";
import type { SseSink } from "./http/sse-fanout.js";

/** The agents the gateway accepts messages for (the live registry, docs/registry.md). */
export interface AgentCatalog {
  has(agent: string): Promise<boolean>;
  names(): readonly string[];
  /** Why `agent` is unknown, when the catalog knows more than "not defined" (e.g. it was deleted). */
  explainMissing?(agent: string): string | undefined;
}

/** Publishes an inbound envelope on `moniro.in.<agent>` and waits for the JetStream ack. */
export interface InboundPublisher {
  publish(envelope: InboundEnvelope): Promise<void>;
}

/** `moniro.ctl.<agent>` request/reply. */
export interface ControlClient {
  request(agent: string, op: ControlReply["op"], reason?: string): Promise<ControlReply>;
}

/** An agent's SSE stream, its subscriptions ready. */
export interface AgentStream {
  /** Starts writing to the client: the stored messages after `afterSequence` first, then the live feed. */
  attach(sink: SseSink): void;
  close(): Promise<void>;
  /**
   * The stream sequence delivery starts after. The SSE preamble carries it as
   * an `id:` without data, so a client that reconnects before its first
   * message still resumes where it was.
   */
  startsAfter?: number;
  /** Set when Last-Event-ID cannot be honoured in full: sent to the client as `event: gap` before anything else. */
  gap?: StreamGap;
}

/** The agent's events and its `http:` outbound messages, from `afterSequence` (exclusive) or from now. */
export interface AgentStreamSource {
  open(agent: string, options: { afterSequence?: number }): Promise<AgentStream>;
}

export interface AgentStatus {
  state: AgentStateRecord | null;
  lease: { holder: string; epoch: number } | null;
  inbox: Record<Lane, number>;
}

export interface ThreadPage {
  entries: ThreadEntry[];
  corrupt: Array<{ entryId: string; error: string }>;
  /** Cursor for the next page, or null at the end. */
  next: string | null;
}

export interface ThreadQuery {
  context: string;
  limit: number;
  order: "newest" | "oldest";
  /** Exclusive entry id to continue from. */
  cursor?: string;
}

/** Read-only view of an agent's Redis state. */
export interface AgentInspector {
  status(agent: string): Promise<AgentStatus>;
  /** The `state` field of many agents in one pipelined read (null: no state record). */
  states?(agents: readonly string[]): Promise<Array<AgentStateRecord["state"] | null>>;
  thread(agent: string, query: ThreadQuery): Promise<ThreadPage>;
}

/** Request counts and latency by route and status (Prometheus). */
export interface HttpMetrics {
  observe(labels: { route: string; method: string; status: number }, seconds: number): void;
}

/** The slice of a pino logger the gateway uses. */
export interface GatewayLogger {
  info(fields: Record<string, unknown>, message: string): void;
  warn(fields: Record<string, unknown>, message: string): void;
  error(fields: Record<string, unknown>, message: string): void;
}

/** A scheduler request without its envelope stamp (`v`, `id`, `ts`: the client adds them). */
export type SchedulerAsk = SchedulerRequestInput extends infer R
  ? R extends SchedulerRequestInput
    ? Omit<R, "v" | "id" | "ts">
    : never
  : never;

/** `<ns>.sched.<op>` request/reply, answered by a scheduler. */
export interface SchedulerClient {
  request(request: SchedulerAsk): Promise<SchedulerReply>;
}

/** One stored record of the dead-letter stream, as bytes. */
export interface StoredDeadLetter {
  seq: number;
  /** When JetStream stored it (ISO 8601). */
  time: string;
  /** The DLQ subject it was published on (`<ns>.dlq.<origin>`). */
  subject: string;
  data: Uint8Array;
}

/** The dead-letter stream (MONIRO_DLQ) and the republishing of what it holds. */
export interface DeadLetterQueue {
  /** Up to `limit` records after `after` (exclusive), oldest first; `more` when others follow. */
  list(after: number, limit: number): Promise<{ records: StoredDeadLetter[]; more: boolean }>;
  get(seq: number): Promise<StoredDeadLetter | undefined>;
  /** JetStream publish of `payload` on `subject` with `msgId`; where it was stored. */
  republish(
    subject: string,
    payload: string,
    msgId: string,
  ): Promise<{ stream: string; seq: number; duplicate: boolean }>;
  /** Deletes one record; false when it was not there. */
  remove(seq: number): Promise<boolean>;
}

/** How one service looks from the gateway. */
export interface ServiceHealth {
  status: "up" | "down";
  detail: string;
}

/** Sees whether the other services are up (NATS interest, lease holders; docs/api.md `GET /v1/status`). */
export interface ServiceProbes {
  nats(): Promise<ServiceHealth>;
  redis(): Promise<ServiceHealth>;
  scheduler(): Promise<ServiceHealth>;
  runners(): Promise<ServiceHealth>;
  toolExecutors(): Promise<ServiceHealth>;
  signalBridge(): Promise<ServiceHealth>;
}
