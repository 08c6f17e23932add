import type { Bus } from "@moniro/bus";
import { requestFailure } from "@moniro/bus";
import type { Subjects, ToolCallEnvelope, ToolResultEnvelope } from "@moniro/envelopes";
import { decode, stamp, TOOL_LOST_AFTER_MS, toolResultEnvelopeSchema } from "@moniro/envelopes";
import type { Clock, ToolBus } from "@moniro/ports";
import { systemClock, ToolBusError } from "@moniro/ports";

export interface NatsToolBusOptions {
  clock?: Clock;
  /**
   * Extra wait past the call's deadline: the executor stops the call at the
   * deadline and replies with an error result, which should still arrive.
   */
  replyGraceMs?: number;
  /**
   * An executor sends a keepalive every second while it runs a call; after
   * this long without one (or the result) the executor is declared lost and
   * the model gets an `executor_lost` result at once, not at the deadline.
   * Default TOOL_LOST_AFTER_MS (5 s).
   */
  lostAfterMs?: number;
  /**
   * A saturated executor replies `executor_busy` (retryable) at once; the call
   * is sent again (the queue group picks an executor at random) up to this
   * many times before the model sees the busy result. Default 3.
   */
  busyRetries?: number;
  /** Pause before a busy retry, times the retries so far (the first retry goes at once), at most 100 ms. Default 10 ms. */
  busyBackoffMs?: number;
}

/**
 * ToolBus over NATS request/reply (`moniro.tool.<name>`, queue group
 * `tool-executor`). Honours the call's deadline and the loop's AbortSignal
 * (publishing `moniro.tool.cancel.<callId>` so the executor stops too). The
 * request carries the active trace context (the loop's tool span), so the
 * executor's span is its child. Every
 * failure becomes a ToolBusError whose message tells the model what happened
 * and what it can do about it.
 */
export class NatsToolBus implements ToolBus {
  private readonly clock: Clock;
  private readonly replyGraceMs: number;
  private readonly lostAfterMs: number;
  private readonly busyRetries: number;
  private readonly busyBackoffMs: number;

  constructor(
    private readonly bus: Pick<Bus, "publish" | "request">,
    private readonly subjects: Subjects,
    options: NatsToolBusOptions = {},
  ) {
    this.clock = options.clock ?? systemClock;
    this.replyGraceMs = options.replyGraceMs ?? 2_000;
    this.lostAfterMs = options.lostAfterMs ?? TOOL_LOST_AFTER_MS;
    this.busyRetries = options.busyRetries ?? 3;
    this.busyBackoffMs = options.busyBackoffMs ?? 10;
  }

  /** One call; a busy executor's reply is retried (another executor may take it) while the deadline allows. */
  async call(call: ToolCallEnvelope, options: { signal?: AbortSignal } = {}): Promise<ToolResultEnvelope> {
    for (let attempt = 1; ; attempt++) {
      const result = await this.callOnce(call, options);
      const busy = result.isError && result.errorCode === "executor_busy" && result.retryable === true;
      const pause = Math.min(100, this.busyBackoffMs * (attempt - 1));
      if (!busy || attempt > this.busyRetries || this.clock.now() + pause >= call.deadlineMs) return result;
      if (options.signal?.aborted) throw canceled(call, options.signal.reason);
      if (pause > 0) await new Promise((resolve) => setTimeout(resolve, pause));
    }
  }

  private async callOnce(call: ToolCallEnvelope, options: { signal?: AbortSignal }): Promise<ToolResultEnvelope> {
    const { signal } = options;
    if (signal?.aborted) throw canceled(call, signal.reason);
    const remaining = call.deadlineMs - this.clock.now();
    if (remaining <= 0) {
      throw new ToolBusError(`tool '${call.tool}' was not called: its deadline had already passed`, {
        errorClass: "resource",
        code: "deadline_passed",
        details: { callId: call.callId, tool: call.tool },
      });
    }
    const subject = this.subjects.tool(call.tool);
    const timeoutMs = remaining + this.replyGraceMs;
    const requestAbort = new AbortController();
    const onAbort = () => {
      requestAbort.abort(signal?.reason);
      this.cancelRemote(call, signal?.reason);
    };
    signal?.addEventListener("abort", onAbort, { once: true });
    let reply: Uint8Array;
    try {
      reply = await abortable(
        this.bus.request(subject, call, { timeoutMs, idleMs: this.lostAfterMs, signal: requestAbort.signal }),
        requestAbort.signal,
      );
    } catch (error) {
      if (signal?.aborted) throw canceled(call, signal.reason);
      throw failed(call, subject, timeoutMs, this.lostAfterMs, error);
    } finally {
      signal?.removeEventListener("abort", onAbort);
    }
    const decoded = decode(toolResultEnvelopeSchema, reply, "tool result");
    if (!decoded.ok) {
      throw new ToolBusError(
        `tool '${call.tool}' answered with an invalid result (${decoded.error.message}); this is a bug in the tool executor, not in your input`,
        { errorClass: "permanent", code: "invalid_reply", details: { callId: call.callId, tool: call.tool } },
      );
    }
    return decoded.value;
  }

  private cancelRemote(call: ToolCallEnvelope, reason: unknown): void {
    const detail = reason instanceof Error ? reason.message : typeof reason === "string" ? reason : "canceled";
    try {
      this.bus.publish(this.subjects.toolCancel(call.callId), {
        ...stamp(this.clock.now()),
        callId: call.callId,
        agent: call.agent,
        reason: detail.slice(0, 1000),
      });
    } catch {
      // Best effort: the executor also stops at the deadline.
    }
  }
}

function canceled(call: ToolCallEnvelope, reason: unknown): ToolBusError {
  return new ToolBusError(`tool call ${call.callId} (${call.tool}) was canceled`, {
    errorClass: "permanent",
    code: "canceled",
    details: { callId: call.callId, tool: call.tool },
    cause: reason,
  });
}

function failed(
  call: ToolCallEnvelope,
  subject: string,
  timeoutMs: number,
  lostAfterMs: number,
  error: unknown,
): ToolBusError {
  const details = { callId: call.callId, tool: call.tool, subject };
  switch (requestFailure(error)) {
    case "no-responders":
      return new ToolBusError(
        `no tool executor is available for '${call.tool}' (nobody answers on ${subject}): the tool executors may be down or restarting. Try again in a moment, or continue without this tool.`,
        { errorClass: "transient", code: "no_executor", details, cause: error },
      );
    case "lost":
      return new ToolBusError(
        `tool executor lost: the executor running '${call.tool}' stopped answering (no keepalive for ${Math.round(lostAfterMs / 1000)} s); it died or was cut off. The call may or may not have taken effect; check before retrying.`,
        { errorClass: "transient", code: "executor_lost", details, cause: error },
      );
    case "timeout":
      return new ToolBusError(
        `tool executor lost or deadline passed: tool '${call.tool}' gave no result within ${Math.round(timeoutMs / 1000)} s (the executor running it died or the call ran past its deadline). It may or may not have taken effect; check before retrying.`,
        { errorClass: "transient", code: "executor_lost", details, cause: error },
      );
    case "closed":
      return new ToolBusError(
        `tool '${call.tool}' was not called: this runner lost its connection to the message bus. Try again in a moment.`,
        { errorClass: "transient", code: "bus_unavailable", details, cause: error },
      );
    default:
      return new ToolBusError(
        `tool '${call.tool}' could not be called: ${(error as Error)?.message ?? String(error)}`,
        { errorClass: "transient", code: "request_failed", details, cause: error },
      );
  }
}

function abortable<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const abort = () => reject(signal.reason);
    if (signal.aborted) return abort();
    signal.addEventListener("abort", abort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener("abort", abort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener("abort", abort);
        reject(error);
      },
    );
  });
}
