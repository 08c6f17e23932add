import { z } from "zod";
import { runCommand } from "../exec/run-command.js";
import { sandboxReport, sandboxUnavailableText } from "../exec/sandbox.js";
import { handToCommandUser } from "../exec/workspace-owner.js";
import { defineTool, fail, ok } from "../tool.js";

export const execTool = defineTool({
  name: "exec",
  runsCommands: true,
  description:
    "Run a bash command in the workspace and wait for it. Output (stdout+stderr) is capped. For servers or long jobs use 'process'.",
  input: z.object({
    command: z.string().min(1),
    timeout_ms: z.number().int().min(100).optional().describe("Default 60000"),
  }),
  async run(input, ctx) {
    if (ctx.sandbox.kind === "unavailable") {
      return fail("sandbox-unavailable", sandboxUnavailableText(ctx.sandbox.reason), {
        data: { sandbox: sandboxReport(ctx.sandbox, ctx.limits, false) },
      });
    }
    const requested = input.timeout_ms ?? ctx.limits.defaultTimeoutMs;
    const untilDeadline = Math.max(100, ctx.deadlineMs - Date.now() - 200);
    const timeoutMs = Math.min(requested, ctx.limits.maxTimeoutMs, untilDeadline);
    const network = ctx.network ?? false;
    await handToCommandUser(ctx.limits, ctx.workspace);
    const result = await runCommand(input.command, ctx.workspace, ctx.limits, {
      timeoutMs,
      signal: ctx.signal,
      sandbox: ctx.sandbox,
      network,
    });
    const data = {
      exitCode: result.exitCode,
      signal: result.signal,
      timedOut: result.timedOut,
      canceled: result.canceled,
      truncated: result.truncated,
      output: result.output,
      sandbox: sandboxReport(ctx.sandbox, ctx.limits, network),
    };
    if (result.spawnError !== undefined) return fail("spawn-failed", `Could not start bash: ${result.spawnError}.`);
    const body = result.output === "" ? "(no output)" : result.output;
    if (result.timedOut) {
      return fail(
        "timeout",
        `${body}\n[timed out after ${timeoutMs} ms; the command and its children were killed. Use a larger timeout_ms or 'process' for long jobs]`,
        { data },
      );
    }
    if (result.canceled)
      return fail("canceled", `${body}\n[canceled; the command and its children were killed]`, { data });
    const status = result.exitCode === null ? `killed by ${result.signal}` : `exit code ${result.exitCode}`;
    const content = `${body}\n[${status}]`;
    // A non-zero exit is information (grep finding nothing), not a failed call.
    return ok(data, content);
  },
});
