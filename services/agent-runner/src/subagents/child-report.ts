import { reportIdOf, type ThreadEntry, type Usage } from "@moniro/envelopes";
import type { Clock, EventSink, RunEnd, ThreadStore, Tracing } from "@moniro/ports";
import type { ChildRecords } from "@moniro/store";
import { UNIFIED_THREAD } from "../loop/index.js";
import type { RuntimeAgent } from "../runtime/agent-directory.js";
import type { InternalChannel } from "./internal-channel.js";

/** What a child whose last turn has no text reports. */
export const EMPTY_REPORT = "(the sub-agent ended without a final answer)";

/**
 * The report: the child's last assistant text (its final answer), followed by
 * how its task ended when it did not simply finish (step limit, failure); and
 * its token use.
 */
export function reportOf(entries: readonly ThreadEntry[]): { text: string; usage: Usage } {
  let text: string | undefined;
  let ending: string | undefined;
  const usage: Usage = { inputTokens: 0, outputTokens: 0 };
  for (const entry of entries) {
    if (entry.kind === "instruction" && (entry.status === "incomplete" || entry.status === "failed")) {
      ending = `(the sub-agent's task ended ${entry.status}: ${entry.detail})`;
    }
    if (entry.kind !== "assistant") continue;
    if (entry.usage) {
      usage.inputTokens +=
        entry.usage.inputTokens + (entry.usage.cacheReadInputTokens ?? 0) + (entry.usage.cacheCreationInputTokens ?? 0);
      usage.outputTokens += entry.usage.outputTokens;
    }
    if (entry.text.trim().length > 0) {
      text = entry.text.trim();
      ending = undefined;
    }
  }
  const parts = [text ?? (ending ? undefined : EMPTY_REPORT), ending].filter((part) => part !== undefined);
  return { text: parts.join("\n\n"), usage };
}

interface ReportDeps {
  records: ChildRecords;
  channel: InternalChannel;
  threads: Pick<ThreadStore, "read">;
  events: EventSink;
  clock: Clock;
}

/**
 * The id of the report on the child's thread as it stands: one per last
 * input the child took. Every send of the same report (a runner taking a
 * crashed child over, a sweep finding a given-up child) computes the same id,
 * so the parent's dedupe keeps one; a report written after the child took
 * another input (its parent's follow-up `message`) has a new id, so it is
 * not dropped as a copy of the one before. The report on the task alone
 * keeps the id derived from the child's name and creation time.
 */
export function reportIdFor(child: string, createdAt: number, entries: readonly ThreadEntry[]): string {
  const inputs = entries.filter((entry) => entry.kind === "input");
  const last = inputs.at(-1);
  if (!last || last === inputs[0]) return reportIdOf(child, createdAt);
  return reportIdOf(`${child}:${last.envelopeId}`, last.ts);
}

/**
 * Sends a child's report to its parent over the internal channel (durably),
 * unless it was canceled: its text (reportOf), with `ending` added when the
 * child failed outside its task. A child its parent removed already (it took
 * a report) still reports what it did since, i.e. an input it took after that
 * report; the report the parent took is not sent again.
 */
export async function sendReport(agent: RuntimeAgent, deps: ReportDeps, ending?: string): Promise<void> {
  const link = agent.parent;
  if (!link) return;
  const [record, entries] = await Promise.all([
    deps.records.get(agent.name),
    deps.threads.read(agent.name, UNIFIED_THREAD),
  ]);
  if (!record || record.status === "canceled") return;
  const reportId = reportIdFor(agent.name, record.definition.createdAt, entries);
  if (record.status === "ended" && record.reportId === reportId) return;
  const report = reportOf(entries);
  const text = ending ? `${report.text === EMPTY_REPORT ? "" : `${report.text}\n\n`}${ending}` : report.text;
  const sent = deps.channel.send({
    id: reportId,
    from: agent.name,
    to: link.name,
    context: record.definition.context,
    text,
    meta: { kind: "report", parent: link.name, child: agent.name, callId: link.callId, wait: record.definition.wait },
    now: deps.clock.now(),
  });
  // A removed child's record stays `ended` (out of the live set); what it spent since is added to its parent's figures.
  const recorded = deps.records.recordReport(agent.name, link.name, reportId, report.usage);
  await Promise.all([sent, recorded]);
  const data = { parent: link.name, child: agent.name, callId: link.callId, reportId, usage: report.usage };
  deps.events.emit(agent.name, "subagent-ended", data);
  deps.events.emit(link.name, "subagent-ended", data);
}

/**
 * A child's run end: its report goes to its parent (durably) before the
 * child's atomic look at its inbox and release (RunEnd), so a crash between
 * them cannot lose it. When that look finds an input pending (its parent's
 * follow-up came in meanwhile), the run goes on and its next run end sends
 * another report, under a new id (reportIdFor): the parent gets a report on
 * every input the child took. A canceled child reports nothing. Other agents
 * pass straight through.
 */
export function reportingRunEnd(agent: RuntimeAgent, inner: RunEnd, deps: ReportDeps): RunEnd {
  if (!agent.parent) return inner;
  return {
    async releaseIfIdle(fence, patch) {
      await sendReport(agent, deps);
      return inner.releaseIfIdle(fence, patch);
    },
  };
}

/**
 * A child left in `error` after its restarts reports that it failed, with
 * why; the report is delivered like any other, and the child is then removed.
 */
export function reportGivenUp(agent: RuntimeAgent, why: string, deps: ReportDeps): Promise<void> {
  const restarts = agent.settings.restart.maxRestarts;
  return sendReport(agent, deps, `(the sub-agent failed: ${why}; it was given up after ${restarts} restarts)`);
}

/** A child's events carry its parent and the parent's spawning call, so they can be tied to it. */
export function linkedEvents(agent: RuntimeAgent, events: EventSink): EventSink {
  const link = agent.parent;
  if (!link) return events;
  return {
    emit: (name, type, data = {}) => events.emit(name, type, { ...data, parent: link.name, parentCallId: link.callId }),
  };
}

/**
 * A child's spans carry its parent and the spawning call as attributes; its
 * cycles also sit under the parent's `execute_tool subagent` span, as the
 * task envelope carries that span's traceparent.
 */
export function linkedTracing(agent: RuntimeAgent, tracing: Tracing): Tracing {
  const link = agent.parent;
  if (!link) return tracing;
  const attributes = { "moniro.parent": link.name, "moniro.parent.call_id": link.callId };
  return { span: (name, own, fn, options) => tracing.span(name, { ...own, ...attributes }, fn, options) };
}
