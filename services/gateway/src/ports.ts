import type { ControlReply, InboundEnvelope, Lane, ThreadEntry } from "@moniro/envelopes";
import type { AgentStateRecord } from "@moniro/ports";
import type { SseSink } from "./http/sse-fanout.js";

/** The agents the gateway accepts messages for (MONIRO_AGENTS_DIR). */
export interface AgentCatalog {
  has(agent: string): Promise<boolean>;
  names(): readonly string[];
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
