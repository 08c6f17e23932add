import type { Bus } from "@moniro/bus";
import type { Subjects, ToolCallEnvelope, ToolResultEnvelopeInput } from "@moniro/envelopes";
import type { Tracing } from "@moniro/ports";
import { splitContext } from "@moniro/store";
import { processCallOwner, type ResolvedPolicy, runTool, type ToolOutcome, toolCatalog } from "@moniro/tool-catalog";
import type { AgentPolicies } from "./agent-policies.js";
import type { CallSlots } from "./call-slots.js";
import type { ExecutorMetrics } from "./executor-metrics.js";
import { forwardToOwner } from "./process-forwarder.js";
import type { RunningCalls, StopReason } from "./running-calls.js";
import { handOffCall } from "./slot-handoff.js";
import { type ToolContextDeps, toolContextFor } from "./tool-context.js";
import {
  busyOutcome,
  canceledOutcome,
  deadlineOutcome,
  errorOutcome,
  resultEnvelope,
  shuttingDownOutcome,
} from "./tool-results.js";

export interface CallHandlerDeps {
  executorId: string;
  slots: CallSlots;
  running: RunningCalls;
  policies: AgentPolicies;
  context: ToolContextDeps;
  bus: Pick<Bus, "request">;
  subjects: Subjects;
  tracing: Tracing;
  metrics: ExecutorMetrics;
  now: () => number;
  /** A monotonic clock in ms (durations). */
  monotonic?: () => number;
  /**
   * When every slot is taken, how long a call waits for the next one freed
   * before it is refused with `executor_busy` (never past its deadline).
   * Default 0: refuse at once. See docs/tool-executor.md.
   */
  busyWaitMs?: number;
}

/**
 * How a call reached this executor: the shared queue group, this executor's
 * own proc subject (a process it owns), or its handoff subject (a call that
 * waited on a full executor, sent here because this one announced a free slot).
 */
export type CallRoute = "queue" | "owner" | "handoff";

/**
 * One tool call, from envelope to reply: refuse when draining or saturated,
 * forward process calls to the owning executor, check the agent, run the
 * tool under the agent's policy with a signal that fires at the deadline or
 * on cancel. Replies as soon as the call is stopped, even if the tool takes
 * longer to notice (its slot stays taken until it does). Never throws.
 */
export class CallHandler {
  private draining = false;
  private readonly monotonic: () => number;

  constructor(private readonly deps: CallHandlerDeps) {
    this.monotonic = deps.monotonic ?? (() => performance.now());
  }

  /** Stop taking new calls (they get a retryable busy reply); running ones go on. */
  drain(): void {
    this.draining = true;
  }

  async handle(call: ToolCallEnvelope, route: CallRoute): Promise<ToolResultEnvelopeInput> {
    const { deps } = this;
    const started = this.monotonic();
    const reply = (outcome: ToolOutcome) =>
      resultEnvelope(call, outcome, {
        executorId: deps.executorId,
        durationMs: this.monotonic() - started,
        now: deps.now(),
      });
    try {
      if (this.draining) {
        deps.metrics.refused(call.tool, "draining");
        return reply(busyOutcome(deps.executorId, deps.slots.limit));
      }
      const owner = route === "queue" ? processCallOwner(call.tool, call.input) : undefined;
      if (owner !== undefined && owner !== deps.executorId) {
        deps.metrics.forwarded(call.tool);
        const forwarded = await forwardToOwner(call, owner, deps);
        return "reply" in forwarded ? forwarded.reply : reply(forwarded.outcome);
      }
      const waitMs = () => Math.min(deps.busyWaitMs ?? 0, call.deadlineMs - deps.now());
      // Only a call from the queue group that needs no particular executor may move to another one's free slot.
      let waited = await deps.slots.acquireWithin(waitMs(), { transferable: route === "queue" && owner === undefined });
      if (typeof waited === "object") {
        deps.metrics.handedOff(call.tool);
        const handed = await handOffCall(call, waited.handOffTo, deps);
        if (handed !== "gone") return "reply" in handed ? handed.reply : reply(handed.outcome);
        // The executor that announced the slot is gone: wait here again (a call moves at most once).
        waited = await deps.slots.acquireWithin(waitMs());
      }
      if (waited !== "acquired") {
        deps.metrics.refused(call.tool, "busy");
        return reply(busyOutcome(deps.executorId, deps.slots.limit));
      }
      if (this.draining) {
        // The slot came free while this executor started to drain: no new calls.
        deps.slots.release();
        deps.metrics.refused(call.tool, "draining");
        return reply(busyOutcome(deps.executorId, deps.slots.limit));
      }
      const attributes = {
        "gen_ai.tool.name": call.tool,
        "gen_ai.tool.call.id": call.callId,
        "moniro.agent": call.agent,
        "moniro.executor.id": deps.executorId,
        "moniro.tool.route": route,
      };
      return await deps.tracing.span(`tool ${call.tool}`, attributes, async (span) => {
        const outcome = await this.runHere(call, route);
        const seconds = (this.monotonic() - started) / 1000;
        deps.metrics.observe(call.tool, { isError: outcome.isError ?? false, errorCode: outcome.errorCode }, seconds);
        span.setAttributes({
          "moniro.tool.is_error": outcome.isError ?? false,
          ...(outcome.errorCode ? { "moniro.tool.error_code": outcome.errorCode } : {}),
        });
        return reply(outcome);
      });
    } catch (error) {
      return reply(
        errorOutcome(
          "tool-failed",
          `The tool executor failed on '${call.tool}': ${(error as Error)?.message ?? String(error)}`,
        ),
      );
    }
  }

  /**
   * Runs the call on this executor; the slot is already taken and is released
   * when the tool returns. Settles with the tool's outcome, or as soon as the
   * call is stopped (deadline, cancel, shutdown) with that reason's outcome
   * while the tool goes on until it notices. One promise per call: this runs
   * for every tool call.
   */
  private runHere(call: ToolCallEnvelope, route: CallRoute): Promise<ToolOutcome> {
    const { deps } = this;
    return new Promise<ToolOutcome>((resolve, reject) => {
      let released = false;
      const release = () => {
        if (released) return;
        released = true;
        deps.running.remove(call.callId);
        deps.slots.release();
      };
      const controller = new AbortController();
      const stop = (reason: StopReason) => {
        if (controller.signal.aborted) return;
        controller.abort(new Error(reason.kind === "canceled" ? reason.detail : reason.kind));
        resolve(stoppedOutcome(call, reason, deps.executorId));
      };
      const early = deps.running.add(call.callId, stop);
      if (early) {
        release();
        resolve(canceledOutcome(call.tool, early.detail));
        return;
      }
      const remaining = call.deadlineMs - deps.now();
      if (remaining <= 0) {
        release();
        resolve(deadlineOutcome(call.tool, call.deadlineMs));
        return;
      }
      const timer = setTimeout(() => stop({ kind: "deadline" }), remaining);
      // Once stopped, the promise has settled: the tool's late outcome or failure is dropped.
      this.execute(call, route, controller.signal, () => {
        clearTimeout(timer);
        release();
      }).then(resolve, reject);
    });
  }

  private async execute(
    call: ToolCallEnvelope,
    route: CallRoute,
    signal: AbortSignal,
    finished: () => void,
  ): Promise<ToolOutcome> {
    const { deps } = this;
    try {
      const lookup = await deps.policies.lookup(call.agent);
      if (!lookup.ok) return errorOutcome(lookup.errorCode, lookup.message);
      // Only a tool that starts commands uses the network: the members' policies are read for it alone.
      const network = toolCatalog.get(call.tool)?.runsCommands
        ? await networkOf(call, lookup.policy, deps)
        : { given: lookup.policy.network };
      // A handed-off call came from the queue group: it answers `process list` for the whole fleet.
      const ctx = toolContextFor(call, signal, deps.context, route === "owner" ? "owner" : "queue", network.given);
      const outcome = await runTool(call.tool, call.input, ctx, { policy: lookup.policy });
      if (network.withheld === undefined) return outcome;
      const noted = withheldNote(outcome, network.withheld);
      if (noted !== outcome) {
        deps.context.logger?.warn(
          { agent: call.agent, context: call.context, tool: call.tool, callId: call.callId },
          `command ran without network although the agent's policy gives it: ${network.withheld}`,
        );
      }
      return noted;
    } finally {
      finished();
    }
  }
}

/**
 * Whether a call's commands get the network (`exec`, `process start`). In a workspace context
 * (`<workflow>:<tag>`) every member's commands bind the same shared directory, so a unix socket a
 * member with the network leaves there would relay it to a member without: the network is given
 * only when every member's policy gives it (read on every call, like the seat). Otherwise the
 * calling agent's own policy decides. `withheld` says why a policy's network was not given.
 */
async function networkOf(
  call: ToolCallEnvelope,
  policy: ResolvedPolicy,
  deps: CallHandlerDeps,
): Promise<{ given: boolean; withheld?: string }> {
  if (!policy.network) return { given: false };
  const names = splitContext(call.context);
  if (names === undefined) return { given: true };
  const instance = `${names.workflow}:${names.tag}`;
  const team = deps.context.team;
  if (team === undefined) {
    return { given: false, withheld: `this executor cannot read the members of ${instance} (no workspace store)` };
  }
  let members: { name: string; agent: string }[];
  try {
    members = await team.store.instance(names.workflow, names.tag).members();
  } catch (error) {
    return { given: false, withheld: `the members of ${instance} could not be read (${(error as Error).message})` };
  }
  const without: string[] = [];
  for (const member of members) {
    const lookup = await deps.policies.lookup(member.agent);
    if (!lookup.ok || !lookup.policy.network) without.push(member.agent);
  }
  if (members.length > 0 && without.length === 0) return { given: true };
  const who =
    members.length === 0
      ? "it has no members"
      : `${without.map((agent) => `'${agent}'`).join(", ")} ha${without.length === 1 ? "s" : "ve"} no network`;
  return {
    given: false,
    withheld: `in workspace ${instance} every member's commands share one directory, and ${who}: a socket left there would pass the network to them. Give every member 'tools.network: true', or run networked commands in your personal context`,
  };
}

/** A call whose network its policy gives but its workspace withheld: the command's result says why. */
function withheldNote(outcome: ToolOutcome, reason: string): ToolOutcome {
  const data = outcome.data;
  if (data === null || typeof data !== "object" || !("sandbox" in data)) return outcome;
  return {
    ...outcome,
    content: `${outcome.content}\n[ran without network: ${reason}]`,
    data: { ...data, networkWithheld: reason },
  };
}

function stoppedOutcome(call: ToolCallEnvelope, reason: StopReason, executorId: string): ToolOutcome {
  switch (reason.kind) {
    case "deadline":
      return deadlineOutcome(call.tool, call.deadlineMs);
    case "canceled":
      return canceledOutcome(call.tool, reason.detail);
    case "shutdown":
      return shuttingDownOutcome(call.tool, executorId);
  }
}
