import type { EventType } from "./event.js";
import { NAME_PATTERN } from "./names.js";

/** The JetStream streams of DESIGN §2. */
export const STREAMS = { in: "MONIRO_IN", out: "MONIRO_OUT", dlq: "MONIRO_DLQ" } as const;

export const TOOL_EXECUTOR_QUEUE = "tool-executor";

/**
 * Tool calls are long requests: while an executor runs a call it sends a
 * keepalive (an empty message with the `Moniro-Keepalive` header) to the
 * call's reply subject every TOOL_KEEPALIVE_MS, and the runner declares the
 * executor lost after TOOL_LOST_AFTER_MS without one (docs/integration.md).
 */
export const TOOL_KEEPALIVE_MS = 1_000;
export const TOOL_LOST_AFTER_MS = 5_000;

function token(value: string, what: string): string {
  if (!/^[^\s.*>]+$/.test(value)) {
    throw new Error(`${what} '${value}' cannot be a NATS subject token (no dots, spaces, '*' or '>')`);
  }
  return value;
}

function name(value: string, what: string): string {
  if (!NAME_PATTERN.test(value)) throw new Error(`${what} '${value}' must match ${NAME_PATTERN}`);
  return value;
}

/**
 * Subject and stream names for one namespace. Production uses the namespace
 * `moniro` (the public contract); tests use a random one so they can share a
 * NATS server without seeing each other's traffic.
 */
export function createSubjects(namespace = "moniro") {
  const ns = token(namespace, "namespace");
  const streamPrefix = ns === "moniro" ? "" : `${ns.toUpperCase().replace(/[^A-Z0-9_]/g, "_")}_`;
  return {
    namespace: ns,
    streams: {
      in: `${streamPrefix}${STREAMS.in}`,
      out: `${streamPrefix}${STREAMS.out}`,
      dlq: `${streamPrefix}${STREAMS.dlq}`,
    },
    /** Inbound envelopes for one agent. */
    in: (agent: string) => `${ns}.in.${name(agent, "agent")}`,
    inAll: `${ns}.in.>`,
    /** Outbound envelopes for one channel (`signal`, `http`, …). */
    out: (channel: string) => `${ns}.out.${token(channel, "channel")}`,
    outAll: `${ns}.out.>`,
    tool: (tool: string) => `${ns}.tool.${token(tool, "tool")}`,
    /** Every tool subject except the proc/cancel ones (those have more tokens). */
    toolAll: `${ns}.tool.*`,
    toolProc: (executorId: string) => `${ns}.tool.proc.${token(executorId, "executor id")}`,
    /** Executor to executor: stop the processes of a stopped workflow instance (processStopRequestSchema). */
    toolProcStop: (executorId: string) => `${ns}.tool.procstop.${token(executorId, "executor id")}`,
    toolCancel: (callId: string) => `${ns}.tool.cancel.${token(callId, "call id")}`,
    toolCancelAll: `${ns}.tool.cancel.*`,
    /**
     * Executor to executor (docs/tool-executor.md "Free-slot handoff"): a full executor whose slot
     * frees with no call waiting there announces it (core publish, body = its executor id)...
     */
    toolSlotFreed: `${ns}.tool.slots.freed`,
    /** ...and an executor with a call waiting for a slot sends it there (request/reply, a tool call envelope). */
    toolHandoff: (executorId: string) => `${ns}.tool.handoff.${token(executorId, "executor id")}`,
    evt: (agent: string, type: EventType) => `${ns}.evt.${name(agent, "agent")}.${type}`,
    evtAgent: (agent: string) => `${ns}.evt.${name(agent, "agent")}.*`,
    evtAll: `${ns}.evt.>`,
    ctl: (agent: string) => `${ns}.ctl.${name(agent, "agent")}`,
    ctlAll: `${ns}.ctl.*`,
    /**
     * Runner to runner, not part of the public contract: input for `agent` landed in its inbox on a
     * runner that does not hold it (queue mode `interrupt`; the holder aborts its current step). Empty body.
     */
    runnerInput: (agent: string) => `${ns}.runner.input.${name(agent, "agent")}`,
    runnerInputAll: `${ns}.runner.input.*`,
    sched: (op: "upsert" | "delete" | "list") => `${ns}.sched.${op}`,
    schedAll: `${ns}.sched.*`,
    /** Workflow instances: request/reply answered by the gateways (queue group `gateway`), workflowRequestSchemas. */
    wf: (op: "start" | "stop" | "get" | "list") => `${ns}.wf.${op}`,
    wfAll: `${ns}.wf.*`,
    /** A workflow instance's shared directory on the tool-executors: request/reply (workspaceFilesRequestSchema). */
    wsFiles: `${ns}.ws.files`,
    /** Pairing of unknown Signal senders: request/reply answered by the signal-bridge (pairingRequestSchema). */
    signalPairing: `${ns}.signal.pairing`,
    dlq: (origin: string) => `${ns}.dlq.${token(origin, "origin")}`,
    dlqAll: `${ns}.dlq.>`,
  };
}
export type Subjects = ReturnType<typeof createSubjects>;

/** The last token of a subject (the agent of `moniro.in.<agent>`, the tool of `moniro.tool.<name>`). */
export function lastToken(subject: string): string {
  const index = subject.lastIndexOf(".");
  return index < 0 ? subject : subject.slice(index + 1);
}
