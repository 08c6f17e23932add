import { z } from "zod";
import { sandboxReport, sandboxUnavailableText } from "../exec/sandbox.js";
import { handToCommandUser } from "../exec/workspace-owner.js";
import {
  instanceStoppedReason,
  ProcessAgentDeletedError,
  ProcessContextError,
  type ProcessInfo,
  ProcessLimitError,
  ProcessNotFoundError,
} from "../process/process-registry.js";
import { takeSeat } from "../team/seat.js";
import { defineTool, fail, ok, type ToolContext, type ToolOutcome } from "../tool.js";

function summary(info: ProcessInfo): Record<string, unknown> {
  return {
    processId: info.processId,
    command: info.command,
    status: info.status,
    exitCode: info.exitCode,
    signal: info.signal,
    ...(info.stoppedBecause !== undefined ? { stoppedBecause: info.stoppedBecause } : {}),
  };
}

/** `Process X was stopped because its workspace review:main stopped.` */
const stoppedText = (info: ProcessInfo): string =>
  `Process ${info.processId} was stopped because ${info.stoppedBecause}.`;

/** This executor's processes of the agent in this context, plus those on every other executor that holds some. */
async function listEverywhere(ctx: ToolContext): Promise<ToolOutcome> {
  const processes = ctx.processes.list(ctx.agent, ctx.context).map(summary);
  const peers = ctx.processPeers ? await ctx.processPeers.list() : [];
  for (const peer of peers) processes.push(...(peer.processes ?? []));
  const unreachable = peers.filter((peer) => peer.error !== undefined);
  const notes = unreachable.map((peer) => `executor ${peer.executorId}: ${peer.error}`);
  if (processes.length === 0 && notes.length === 0) {
    const text = ctx.processPeers
      ? "No background processes of yours on any executor."
      : `No background processes of yours on executor ${ctx.executorId}. A process lives on the executor that started it; poll a processId you were given to reach it.`;
    return ok({ processes }, text);
  }
  const text = [processes.length === 0 ? "No background processes found." : JSON.stringify(processes), ...notes];
  return ok({ processes, ...(notes.length > 0 ? { unreachable: notes } : {}) }, text.join("\n"));
}

const needsId = (action: string): ToolOutcome =>
  fail("invalid-input", `Invalid input for 'process': 'processId' is required for action '${action}'.`);

export const processTool = defineTool({
  name: "process",
  runsCommands: true,
  // Latin-1 only, like every tool description: one character beyond it makes each request body a two-byte string.
  description:
    "Background processes that outlive this call. start(command)->processId; list; poll(processId)->status/exit code; log(processId, lines)->output tail; write(processId, input, close?)->stdin; kill(processId).",
  input: z.object({
    action: z.enum(["start", "list", "poll", "log", "write", "kill"]),
    command: z.string().min(1).optional().describe("For start"),
    processId: z.string().min(1).optional(),
    lines: z.number().int().min(1).max(1_000).optional().describe("For log, default 50"),
    input: z.string().optional().describe("For write: text for stdin"),
    close: z.boolean().optional().describe("For write: close stdin after"),
  }),
  // A call about a process of a stopped instance is refused by its seat: say what became of the process.
  explainRefusal(input, ctx, refused) {
    const id = (input as { processId?: string }).processId;
    const info = id === undefined ? undefined : ctx.processes.peek(ctx.agent, id);
    if (info?.stoppedBecause === undefined || info.context !== ctx.context) return refused;
    return { ...refused, content: `${stoppedText(info)}\n${refused.content}` };
  },
  async run(input, ctx) {
    const registry = ctx.processes;
    try {
      switch (input.action) {
        case "start": {
          if (input.command === undefined) {
            return fail("invalid-input", "Invalid input for 'process': 'command' is required for action 'start'.");
          }
          if (ctx.sandbox.kind === "unavailable") {
            return fail("sandbox-unavailable", sandboxUnavailableText(ctx.sandbox.reason));
          }
          await handToCommandUser(ctx.limits, ctx.workspace);
          const network = ctx.network ?? false;
          // Lets \`list\` on any executor find this one, and an instance's stop reach it: before the spawn (see below).
          await ctx.processPeers?.announce();
          const info = registry.start(
            ctx.agent,
            input.command,
            ctx.workspace,
            { sandbox: ctx.sandbox, network },
            ctx.context,
          );
          if (ctx.seat !== undefined) {
            // The instance may have stopped since the seat was taken: its stop read the executors to reach
            // before this one announced itself, or reached it before the spawn. Then the process goes now.
            // Listed with the reason those the stop reached are, and a later call is told it.
            const still = await takeSeat(ctx, "process");
            if (!still.ok) {
              const { workflow, tag } = ctx.seat;
              const reason =
                still.outcome.errorCode === "not_a_member"
                  ? `${ctx.seat.member.agent} is no longer a member of workspace ${workflow}:${tag}`
                  : instanceStoppedReason(workflow, tag);
              await registry.stop(ctx.agent, info.processId, reason);
              return still.outcome;
            }
          }
          return ok(
            { ...summary(info), sandbox: sandboxReport(ctx.sandbox, ctx.limits, network) },
            `Started ${info.processId}. Use poll/log with this processId.`,
          );
        }
        case "list":
          return await listEverywhere(ctx);
        case "poll": {
          if (input.processId === undefined) return needsId("poll");
          return ok(summary(registry.poll(ctx.agent, input.processId, ctx.context)));
        }
        case "log": {
          if (input.processId === undefined) return needsId("log");
          const log = registry.log(ctx.agent, input.processId, input.lines ?? 50, ctx.context);
          const header = `[${log.info.processId} ${log.info.status}${log.info.exitCode === null ? "" : ` exit ${log.info.exitCode}`}${log.info.stoppedBecause === undefined ? "" : `: stopped because ${log.info.stoppedBecause}`}]`;
          return ok({ ...summary(log.info), lines: log.lines }, [header, ...log.lines].join("\n"));
        }
        case "write": {
          if (input.processId === undefined) return needsId("write");
          if (input.input === undefined && !input.close) {
            return fail(
              "invalid-input",
              "Invalid input for 'process': give 'input' and/or close: true for action 'write'.",
            );
          }
          const info = await registry.write(
            ctx.agent,
            input.processId,
            input.input ?? "",
            input.close ?? false,
            ctx.context,
          );
          return ok(
            summary(info),
            `Wrote ${Buffer.byteLength(input.input ?? "")} bytes to ${info.processId}${input.close ? " and closed stdin" : ""}.`,
          );
        }
        case "kill": {
          if (input.processId === undefined) return needsId("kill");
          return ok(summary(await registry.kill(ctx.agent, input.processId, ctx.context)));
        }
      }
    } catch (error) {
      if (error instanceof ProcessNotFoundError) {
        return fail(
          "process-not-found",
          `${error.message}. It may have been reaped after being idle, or its executor restarted. Use action 'list' to see your processes.`,
        );
      }
      if (error instanceof ProcessContextError) {
        const info = registry.peek(ctx.agent, error.processId);
        const stopped = info?.stoppedBecause === undefined ? "" : ` ${stoppedText(info)}`;
        return fail("process-other-context", `${error.message}.${stopped}`);
      }
      if (error instanceof ProcessAgentDeletedError) return fail("unknown-agent", `${error.message}.`);
      if (error instanceof ProcessLimitError)
        return fail("too-many-processes", `${error.message}; kill one first.`, { retryable: true });
      throw error;
    }
  },
});
