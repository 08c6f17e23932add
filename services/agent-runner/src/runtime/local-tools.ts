import type { OutboundEnvelopeInput, ToolCallEnvelope, ToolResultEnvelope } from "@moniro/envelopes";
import { type Clock, type OutboundCheck, type ToolBus, ToolBusError } from "@moniro/ports";
import { type ResolvedPolicy, resultEnvelope, runMessage, type ToolLogger } from "@moniro/tool-catalog";

/** The tool the runner runs itself, when it knows the agent's policy. */
export const LOCAL_TOOL = "message";

/** One call the runner ran itself, for the per-tool metrics the executor keeps for the others. */
export interface LocalToolRun {
  tool: string;
  isError: boolean;
  errorCode?: string | undefined;
  seconds: number;
}

export interface LocalToolsDeps {
  /** The agent's `tools:` policy (RuntimeAgent.toolPolicy); undefined: the call goes to the executor, which decides. */
  policyOf(agent: string): ResolvedPolicy | undefined;
  /** Whether a bridge serves a channel: the executor's check (@moniro/bus `outboundRoutes`). */
  checkOutbound(channel: string): Promise<OutboundCheck>;
  /** The durable JetStream publish on `<ns>.out.<channel>` (trace headers from the active span). */
  publishOutbound(envelope: OutboundEnvelopeInput): Promise<void>;
  /** Stamped on results as their `executorId`, e.g. `runner:<holder>`. */
  ranBy: string;
  clock: Clock;
  /** A monotonic clock in ms (durations); default performance.now. */
  monotonic?: () => number;
  onRun?: (run: LocalToolRun) => void;
  logger?: ToolLogger;
}

const NEVER_ABORTED = new AbortController().signal;

/**
 * `message` runs here, in the runner, through the catalog's own code (policy,
 * validation, route check, texts and result), so a reply costs no NATS round
 * trip to a tool-executor and needs none running. `message` runs no agent
 * code and touches no workspace: the executor is for tools that do. Every
 * other call, and `message` of an agent whose policy this runner does not
 * hold, goes on to `inner` unchanged. A call whose signal fires once the
 * publish is under way gets its result: the message was sent.
 */
export class LocalToolBus implements ToolBus {
  private readonly monotonic: () => number;

  constructor(
    private readonly inner: ToolBus,
    private readonly deps: LocalToolsDeps,
  ) {
    this.monotonic = deps.monotonic ?? (() => performance.now());
  }

  async call(call: ToolCallEnvelope, options: { signal?: AbortSignal } = {}): Promise<ToolResultEnvelope> {
    const policy = call.tool === LOCAL_TOOL ? this.deps.policyOf(call.agent) : undefined;
    if (policy === undefined) return this.inner.call(call, options);
    const { deps } = this;
    // As over NATS: a step already stopped (cancel, interrupt) gets the loop's own "Cancelled" / "Interrupted" results.
    if (options.signal?.aborted) {
      throw new ToolBusError(`tool call ${call.callId} (${call.tool}) was canceled`, {
        errorClass: "permanent",
        code: "canceled",
        details: { callId: call.callId, tool: call.tool },
        cause: options.signal.reason,
      });
    }
    const started = this.monotonic();
    const outcome = await runMessage(
      call.input,
      {
        agent: call.agent,
        callId: call.callId,
        signal: options.signal ?? NEVER_ABORTED,
        ...(call.replyTo !== undefined ? { replyTo: call.replyTo } : {}),
        ...(call.inReplyTo !== undefined ? { inReplyTo: call.inReplyTo } : {}),
        checkOutbound: deps.checkOutbound,
        publishOutbound: deps.publishOutbound,
        ...(deps.logger !== undefined ? { logger: deps.logger } : {}),
      },
      { policy },
    );
    const durationMs = this.monotonic() - started;
    const isError = outcome.isError ?? false;
    deps.onRun?.({ tool: call.tool, isError, errorCode: outcome.errorCode, seconds: durationMs / 1000 });
    const result = resultEnvelope(call, outcome, { executorId: deps.ranBy, durationMs, now: deps.clock.now() });
    // resultEnvelope sets every field the schema defaults (`v`, `isError`): it is a whole result.
    return result as ToolResultEnvelope;
  }
}
