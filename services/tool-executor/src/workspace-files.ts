import { mkdir } from "node:fs/promises";
import { join, resolve } from "node:path";
import { type Bus, requestFailure, subscribeEnvelopes } from "@moniro/bus";
import {
  decode,
  type ProcessStopReply,
  processStopReplySchema,
  processStopRequestSchema,
  type Subjects,
  type WorkspaceFilesReply,
  workspaceFilesRequestSchema,
} from "@moniro/envelopes";
import type { RedisClient } from "@moniro/store";
import type { LogSink } from "@moniro/telemetry";
import {
  type ExecLimits,
  type ExecSandbox,
  handToCommandUser,
  instanceStoppedReason,
  type ProcessRegistry,
  removeTree,
  runCommand,
} from "@moniro/tool-catalog";
import type { NatsConnection, Subscription } from "@nats-io/transport-node";
import { instanceIndexKey } from "./peer-processes.js";

/** The queue group of the workspace-files responders: one executor answers each request. */
export const WORKSPACE_FILES_QUEUE = "tool-executor";

/** `<root>/<workflow>__<tag>` (both validated subject tokens: no '/' or '..'). */
export const sharedDirectory = (root: string, workflow: string, tag: string): string =>
  join(resolve(root), `${workflow}__${tag}`);

/** Creates the shared directory and runs the setup steps in it, sandboxed like `exec`; a directory it created is removed on failure. */
export async function runSetup(
  deps: { workspacesDir: string; limits: ExecLimits; sandbox: ExecSandbox },
  request: { workflow: string; tag: string; steps: ReadonlyArray<{ shell: string; as?: string | undefined }> },
): Promise<WorkspaceFilesReply> {
  const dir = sharedDirectory(deps.workspacesDir, request.workflow, request.tag);
  if (request.steps.length > 0 && deps.sandbox.kind === "unavailable") {
    return {
      ok: false,
      message: `setup steps need the exec sandbox, which is unavailable here: ${deps.sandbox.reason}`,
    };
  }
  // A kept (persistent) instance's directory is used again, and never removed by a failing step.
  const created = (await mkdir(dir, { recursive: true })) !== undefined;
  await handToCommandUser(deps.limits, resolve(deps.workspacesDir), dir);
  const outputs: Record<string, string> = {};
  for (const [index, step] of request.steps.entries()) {
    const result = await runCommand(step.shell, dir, deps.limits, {
      timeoutMs: deps.limits.defaultTimeoutMs,
      signal: new AbortController().signal,
      sandbox: deps.sandbox,
      network: false,
    });
    const failed =
      result.spawnError !== undefined || result.timedOut || result.exitCode !== 0 || result.signal !== null;
    if (failed) {
      if (created) await removeTree(dir);
      const why =
        result.spawnError !== undefined
          ? `could not start bash: ${result.spawnError}`
          : result.timedOut
            ? `timed out after ${deps.limits.defaultTimeoutMs} ms`
            : result.exitCode !== null
              ? `exit code ${result.exitCode}`
              : `killed by ${result.signal}`;
      return {
        ok: false,
        step: index,
        message: `setup step ${index + 1} (${step.shell}) failed: ${why}`,
        output: result.output,
      };
    }
    if (step.as !== undefined) outputs[step.as] = result.output.replace(/\n$/, "");
  }
  return { ok: true, outputs };
}

/** What stopping an instance's processes needs: this executor's own, and the way to the others. */
export interface InstanceProcessDeps {
  executorId: string;
  subjects: Subjects;
  bus: Pick<Bus, "request">;
  redis: RedisClient;
  redisPrefix: string;
  processes: ProcessRegistry;
  limits: ExecLimits;
  logger: LogSink;
}

/**
 * Stops the background processes started in the instance's context, every member's, on every
 * executor that started one (the Redis set `{w:<workflow>:<tag>}:process-executors`): this one
 * itself, the others on `<ns>.tool.procstop.<executorId>`, in parallel, each SIGTERM then SIGKILL
 * after the kill grace, waited for. An executor that is gone took its processes with it. Then the
 * set is deleted. The instance is already marked stopped, so a start racing this one kills its own
 * process (`process start` announces itself before the spawn and reads the instance after it).
 */
export async function stopInstanceProcesses(deps: InstanceProcessDeps, workflow: string, tag: string): Promise<void> {
  const key = instanceIndexKey(deps.redisPrefix, workflow, tag);
  const executors = await deps.redis.smembers(key);
  const reason = instanceStoppedReason(workflow, tag);
  const timeoutMs = deps.limits.killGraceMs + 3_000;
  await Promise.all(
    executors.map(async (executorId) => {
      if (executorId === deps.executorId) {
        await deps.processes.stopContext(`${workflow}:${tag}`, reason);
        return;
      }
      let reply: ProcessStopReply;
      try {
        const bytes = await deps.bus.request(
          deps.subjects.toolProcStop(executorId),
          { workflow, tag, reason },
          { timeoutMs },
        );
        const decoded = decode(processStopReplySchema, bytes, "process stop reply");
        reply = decoded.ok ? decoded.value : { ok: false, message: decoded.error.message };
      } catch (error) {
        // No responders: the executor is gone, and its processes ended with it.
        if (requestFailure(error) === "no-responders") return;
        reply = { ok: false, message: (error as Error)?.message ?? String(error) };
      }
      if (!reply.ok) {
        deps.logger.warn(
          { instance: `${workflow}:${tag}`, executorId, err: reply.message },
          "background processes of a stopped workflow instance may still run on that executor",
        );
      }
    }),
  );
  await deps.redis.del(key);
}

/** Answers `<ns>.tool.procstop.<executorId>`: stops this executor's processes of a stopped instance. */
export function answerProcessStops(deps: {
  nc: NatsConnection;
  subjects: Subjects;
  executorId: string;
  processes: ProcessRegistry;
  logger: LogSink;
}): Subscription {
  return subscribeEnvelopes({
    nc: deps.nc,
    subject: deps.subjects.toolProcStop(deps.executorId),
    schema: processStopRequestSchema,
    origin: "tool",
    subjects: deps.subjects,
    what: "process stop request",
    logger: deps.logger,
    invalidReply: (error): ProcessStopReply => ({ ok: false, message: error.message }),
    errorReply: (error): ProcessStopReply => ({ ok: false, message: (error as Error)?.message ?? String(error) }),
    handler: async (request): Promise<ProcessStopReply> => {
      const stopped = await deps.processes.stopContext(`${request.workflow}:${request.tag}`, request.reason);
      if (stopped.length > 0) {
        deps.logger.info(
          { instance: `${request.workflow}:${request.tag}`, processes: stopped },
          "background processes stopped with their workflow instance",
        );
      }
      return { ok: true, stopped };
    },
  });
}

/**
 * Answers `<ns>.ws.files` (docs/workflows.md "Instances"): the shared
 * directories of workflow instances on this executor's MONIRO_WORKSPACES_DIR.
 * An invalid request gets `{ ok: false, message }` naming each bad field and
 * a DLQ record on `<ns>.dlq.tool`, as an invalid tool call does.
 */
export function answerWorkspaceFiles(
  deps: {
    nc: NatsConnection;
    subjects: Subjects;
    workspacesDir: string;
    limits: ExecLimits;
    sandbox: ExecSandbox;
    logger: LogSink;
  } & InstanceProcessDeps,
): Subscription {
  const failed = (message: string): WorkspaceFilesReply => ({ ok: false, message });
  return subscribeEnvelopes({
    nc: deps.nc,
    subject: deps.subjects.wsFiles,
    queue: WORKSPACE_FILES_QUEUE,
    schema: workspaceFilesRequestSchema,
    origin: "tool",
    subjects: deps.subjects,
    what: "workspace files request",
    logger: deps.logger,
    invalidReply: (error) => failed(error.message),
    errorReply: (error) => failed((error as Error)?.message ?? String(error)),
    handler: async (request): Promise<WorkspaceFilesReply> => {
      if (request.op === "remove" || request.op === "stop") {
        // The instance stopped: its processes go first, so none writes in a directory being removed.
        await stopInstanceProcesses(deps, request.workflow, request.tag);
        // Removed on descriptors all the same: a process that escaped the stop must not steer it (docs/security.md).
        if (request.op === "remove")
          await removeTree(sharedDirectory(deps.workspacesDir, request.workflow, request.tag));
        return { ok: true, outputs: {} };
      }
      return runSetup(deps, request);
    },
  });
}
