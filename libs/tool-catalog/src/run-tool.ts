import { mkdirSync, rmdirSync } from "node:fs";
import { dirname, relative } from "node:path";
import { WorkspaceError } from "@moniro/store";
import { toolCatalog, toolNames } from "./catalog.js";
import { NotRegularFileError, PathOutsideWorkspaceError, SchedulerUnavailableError } from "./errors.js";
import { type ResolvedPolicy, resolvePolicy, type ToolPolicy } from "./policy/policy.js";
import { placeOf, takeSeat } from "./team/seat.js";
import { fail, type ToolContext, type ToolDefinition, type ToolOutcome } from "./tool.js";
import { type MessageContext, type MessageInput, messageTool, sendMessage } from "./tools/message.js";

function describeIssues(issues: readonly { path: PropertyKey[]; message: string }[]): string {
  return issues
    .map((issue) => `'${issue.path.length === 0 ? "(input)" : issue.path.map(String).join(".")}': ${issue.message}`)
    .join("; ");
}

/**
 * A team tool, or a tool that uses the directory in a workspace context,
 * runs as a member of a running instance (`ctx.seat`), in the instance's
 * shared directory; a personal-context call runs as it came. Returns the
 * refusal outcome when the seat cannot be taken.
 */
async function seated(
  definition: ToolDefinition,
  ctx: ToolContext,
): Promise<{ ctx: ToolContext } | { refused: ToolOutcome }> {
  const usesDirectory = definition.usesWorkspace !== false;
  if (definition.team !== true && !(usesDirectory && ctx.context !== "personal")) return { ctx };
  if (definition.checksSeat === true && !usesDirectory) {
    // Its own store call checks the membership, in the same step as its write: nothing read here.
    const placed = placeOf(ctx, definition.name);
    return placed.ok ? { ctx: { ...ctx, place: placed.place } } : { refused: placed.outcome };
  }
  const taken = await takeSeat(ctx, definition.name);
  if (!taken.ok) return { refused: taken.outcome };
  const { seat } = taken;
  const workspace = ctx.team?.directoryOf(seat.workflow, seat.tag) ?? ctx.workspace;
  return { ctx: { ...ctx, seat, workspace: usesDirectory ? workspace : ctx.workspace } };
}

export interface RunToolOptions {
  /** The agent's tool policy (or an already resolved one): a refused tool is an error result naming the policy. */
  policy?: ToolPolicy | ResolvedPolicy;
}

/**
 * Runs one tool call. Never throws: unknown tool, policy refusal, invalid
 * input, cancellation and crashes all become error outcomes that tell the
 * model what went wrong and what to do instead.
 */
export async function runTool(
  name: string,
  rawInput: unknown,
  ctx: ToolContext,
  options: RunToolOptions = {},
): Promise<ToolOutcome> {
  const definition = toolCatalog.get(name);
  if (definition === undefined) {
    return fail("unknown-tool", `There is no tool '${name}'. Available tools: ${toolNames.join(", ")}.`);
  }
  return guarded(definition, rawInput, ctx, options, async (input) => {
    const seat = await seated(definition, ctx);
    if ("refused" in seat) return definition.explainRefusal?.(input, ctx, seat.refused) ?? seat.refused;
    const context = seat.ctx;
    // Synchronous: one mkdir system call (the workspace usually exists), cheaper than a round trip
    // through libuv's thread pool on every call. Never cached: a deleted workspace is made again.
    if (definition.usesWorkspace !== false) {
      const created = mkdirSync(context.workspace, { recursive: true });
      // A shared directory this call had to make may be one its instance's stop removed after the seat
      // was taken: read the instance again (only then, no call pays it otherwise) and leave nothing behind.
      if (created !== undefined && context.seat !== undefined) {
        const still = await takeSeat(ctx, definition.name);
        if (!still.ok) {
          removeMade(context.workspace, created);
          return definition.explainRefusal?.(input, ctx, still.outcome) ?? still.outcome;
        }
      }
    }
    return definition.run(input, context);
  });
}

/** Removes `dir` and its parents up to `top` (the first directory mkdir made), each only while empty. */
function removeMade(dir: string, top: string): void {
  for (let current = dir; ; current = dirname(current)) {
    try {
      rmdirSync(current);
    } catch {
      return;
    }
    if (current === top || dirname(current) === current) return;
  }
}

/**
 * Runs one `message` call outside an executor (the agent-runner) with only
 * what `message` uses: the same policy check, validation, texts and outcome
 * as `runTool("message", …)`. Never throws.
 */
export function runMessage(rawInput: unknown, ctx: MessageContext, options: RunToolOptions = {}): Promise<ToolOutcome> {
  return guarded(messageTool, rawInput, ctx, options, (input) => sendMessage(input as MessageInput, ctx));
}

/** Policy, input validation, cancellation and crashes around a tool's run: the part every caller shares. */
async function guarded(
  definition: ToolDefinition,
  rawInput: unknown,
  ctx: Pick<ToolContext, "signal" | "callId" | "logger">,
  options: RunToolOptions,
  run: (input: unknown) => Promise<ToolOutcome>,
): Promise<ToolOutcome> {
  const { name } = definition;
  if (options.policy !== undefined) {
    const policy = "allowed" in options.policy ? options.policy : resolvePolicy(options.policy);
    if (!policy.allowed(name)) return fail("tool-denied", policy.reason(name));
  }
  const parsed = definition.input.safeParse(rawInput ?? {});
  if (!parsed.success) {
    return fail(
      "invalid-input",
      `Invalid input for '${name}': ${describeIssues(parsed.error.issues)}. Fix these fields and call again.`,
      { data: { issues: parsed.error.issues.map((i) => ({ path: i.path.map(String), message: i.message })) } },
    );
  }
  if (ctx.signal.aborted) return fail("canceled", `The '${name}' call was canceled before it started.`);
  try {
    return await run(parsed.data);
  } catch (error) {
    if (error instanceof PathOutsideWorkspaceError) return fail("path-outside-workspace", error.message);
    if (error instanceof NotRegularFileError) {
      // Named as the agent knows it: relative to its workspace (only file tools, which have one, throw it).
      const workspace = (ctx as Partial<ToolContext>).workspace;
      const shown = workspace === undefined ? error.path : relative(workspace, error.path) || ".";
      return fail(
        "not-a-regular-file",
        `'${shown}' is not a regular file (a FIFO, device or socket); the file tools read and write regular files only: use 'exec' for it.`,
      );
    }
    if (error instanceof WorkspaceError) {
      return fail(error.code, error.hint === undefined ? error.message : `${error.message}\n${error.hint}`);
    }
    if (error instanceof SchedulerUnavailableError) {
      return fail("scheduler-unavailable", `${error.message}. Try again later.`, { retryable: true });
    }
    if (ctx.signal.aborted) return fail("canceled", `The '${name}' call was canceled or ran past its deadline.`);
    const message = error instanceof Error ? error.message : String(error);
    ctx.logger?.error({ tool: name, callId: ctx.callId, err: message }, "tool crashed");
    return fail("tool-failed", `'${name}' failed: ${message}`);
  }
}
