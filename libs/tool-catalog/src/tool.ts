import type { InboundEnvelope, OutboundEnvelopeInput } from "@moniro/envelopes";
import type { OutboundCheck, PersonalContext } from "@moniro/ports";
import type { NamedMember, Workspace, WorkspaceStore } from "@moniro/store";
import type { z } from "zod";
import type { ExecSandbox } from "./exec/sandbox.js";
import type { ExecLimits } from "./limits.js";
import type { ProcessRegistry } from "./process/process-registry.js";

/**
 * What the team tools (and shared directories) need: the workspace store,
 * a publisher of inbound envelopes (postToChannel's), the agents' states and
 * where an instance's shared directory is. The executor wires it over Redis
 * and JetStream; without it a workspace-context call that needs it is refused.
 */
export interface TeamPort {
  store: WorkspaceStore;
  /** Publishes on `<ns>.in.<agent>`, resolved once durable (JetStream ack). */
  publishInbound(envelope: InboundEnvelope): Promise<void>;
  /** The agent's state from its state record (`idle`, `running`, …), or undefined when it has none. */
  agentState(agent: string): Promise<string | undefined>;
  /** Absolute path of the instance's shared directory, `<workspacesDir>/<workflow>__<tag>`. */
  directoryOf(workflow: string, tag: string): string;
}

/**
 * Where a workspace-context call works, before membership is read: the
 * instance, and the agent that must play one of its members (a sub-agent's
 * parent). Given to a tool that `checksSeat` in its own store call.
 */
export interface TeamPlace {
  workflow: string;
  tag: string;
  instance: Workspace;
  agent: string;
}

/** The member a workspace-context call acts as, checked by runTool (instance running, agent a member). */
export interface TeamSeat {
  workflow: string;
  tag: string;
  instance: Workspace;
  member: NamedMember;
}

/** The minimal logger a tool may use (pino-compatible). */
export interface ToolLogger {
  debug(object: Record<string, unknown>, message?: string): void;
  info(object: Record<string, unknown>, message?: string): void;
  warn(object: Record<string, unknown>, message?: string): void;
  error(object: Record<string, unknown>, message?: string): void;
}

/** Scheduler operations a tool may request (`moniro.sched.<op>`). */
export type SchedulerOp = "upsert" | "delete" | "list";

/**
 * Everything a tool may touch, injected by the executor per call. Tools never
 * open their own connections, read the clock for deadlines or pick ids.
 */
export interface ToolContext {
  agent: string;
  context: string;
  callId: string;
  /** From the call envelope; `message` defaults `to` to it. */
  replyTo?: string;
  inReplyTo?: string;
  /** Absolute path of this agent's workspace root (created if missing by runTool, unless the tool says it never uses it). */
  workspace: string;
  /** Fires on cancel or deadline. */
  signal: AbortSignal;
  /** Absolute epoch ms. */
  deadlineMs: number;
  executorId: string;
  /** Memory, notes, todos and thread history (the context tools use it with `agent`). */
  personal: PersonalContext;
  /** The workspaces of workflow instances (team tools, shared directories); absent: none are reachable. */
  team?: TeamPort;
  /** Set by runTool for a call in a workspace context once membership is checked. */
  seat?: TeamSeat;
  /** Set by runTool instead of `seat` for a tool that `checksSeat` itself. */
  place?: TeamPlace;
  /** Publishes on `moniro.out.<channel>`; the executor stamps nothing, the tool builds the whole envelope. */
  publishOutbound(envelope: OutboundEnvelopeInput): Promise<void>;
  /** Whether something delivers outbound to `channel` (a bridge consumes it), and if not why. */
  checkOutbound(channel: string): Promise<OutboundCheck>;
  /** `moniro.sched.<op>`; throws SchedulerUnavailableError when no scheduler answers. */
  requestScheduler(op: SchedulerOp, request: unknown): Promise<unknown>;
  /** Background processes owned by THIS executor. */
  processes: ProcessRegistry;
  /**
   * The other executors that run processes of this agent (absent when the call
   * was routed to this executor as a process's owner, or outside an executor):
   * `start` announces this executor, `list` merges the others' processes in.
   */
  processPeers?: ProcessPeers;
  limits: ExecLimits;
  /** How exec / process commands run here (probed at executor start). */
  sandbox: ExecSandbox;
  /** The agent's tool policy gives its commands the network (`tools.network: true`); default false. */
  network?: boolean;
  logger?: ToolLogger;
}

/** One other executor's answer to `process list`: its processes, or why it could not answer. */
export interface PeerProcessListing {
  executorId: string;
  processes?: Array<Record<string, unknown>>;
  error?: string;
}

/** See ToolContext.processPeers. */
export interface ProcessPeers {
  /**
   * Records that this executor now runs a process of the agent (and, in a workspace context, one
   * of the instance's: its stop reaches this executor).
   */
  announce(): Promise<void>;
  /** The agent's processes on every other executor that announced itself. */
  list(): Promise<PeerProcessListing[]>;
}

/** A tool's result: `content` is what the model reads; `data` is the structured form. */
export interface ToolOutcome {
  content: string;
  isError?: boolean;
  /** Stable machine code for errors, e.g. `path-outside-workspace`, `invalid-input`, `timeout`. */
  errorCode?: string;
  retryable?: boolean;
  data?: unknown;
}

export interface ToolDefinition<S extends z.ZodType = z.ZodType> {
  name: string;
  /** What the model reads: when to use the tool, what it returns. Keep it short — paid on every step. */
  description: string;
  /** zod input schema; the model sees `z.toJSONSchema(input)`. */
  input: S;
  /**
   * `false` for a tool that never touches `ctx.workspace`: runTool then does
   * not create the directory first (a filesystem round trip per call, paid on
   * the hot path of `message`). Default true.
   */
  usesWorkspace?: boolean;
  /** A team tool: only in a workspace context, run with `ctx.seat` set (see TEAM_TOOL_NAMES). */
  team?: boolean;
  /**
   * A team tool whose store call checks the seat (instance running, the
   * caller a member) atomically with what it writes, refusing with the same
   * codes and texts: runTool reads nothing first and gives it `ctx.place`
   * instead of `ctx.seat` (`channel_send`: one script checks, posts and names
   * whom to push). Only with `usesWorkspace: false`.
   */
  checksSeat?: boolean;
  /**
   * The tool starts commands in the sandbox (`exec`, `process`): only for it does `ctx.network`
   * matter, so an executor works out what a call's context allows (a workspace's members) for it alone.
   */
  runsCommands?: boolean;
  /**
   * The call's seat was refused (instance not running, not a member): the tool may add what it
   * knows to the refusal (`process`: that the process was stopped with its instance).
   */
  explainRefusal?(input: z.output<S>, ctx: ToolContext, refused: ToolOutcome): ToolOutcome;
  run(input: z.output<S>, ctx: ToolContext): Promise<ToolOutcome>;
}

/** Helper that keeps the input type of `run` tied to the schema. */
export function defineTool<S extends z.ZodType>(definition: ToolDefinition<S>): ToolDefinition {
  return definition as unknown as ToolDefinition;
}

/** A successful outcome with structured data; content is the JSON the model reads. */
export function ok(data: unknown, content?: string): ToolOutcome {
  return { content: content ?? (typeof data === "string" ? data : JSON.stringify(data)), data };
}

/** An error outcome: say what went wrong and what to do instead. */
export function fail(errorCode: string, content: string, options: { retryable?: boolean; data?: unknown } = {}) {
  const outcome: ToolOutcome = { content, isError: true, errorCode };
  if (options.retryable !== undefined) outcome.retryable = options.retryable;
  if (options.data !== undefined) outcome.data = options.data;
  return outcome;
}
