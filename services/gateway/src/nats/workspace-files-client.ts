import { type Subjects, type WorkspaceFilesRequest, workspaceFilesReplySchema } from "@moniro/envelopes";
import { HttpError } from "../http/http-error.js";
import type { WorkspaceFiles } from "../workflows/workflow-instances.js";
import type { NatsLink } from "./nats-link.js";

/** How long one setup step may take on the executor (its exec default) plus slack, per step. */
const PER_STEP_MS = 65_000;

/**
 * The shared directories of workflow instances, on the tool-executors
 * (`<ns>.ws.files`, docs/workflows.md): the gateway has no workspaces volume.
 */
export function natsWorkspaceFiles(link: NatsLink, subjects: Subjects): WorkspaceFiles {
  const request = async (body: WorkspaceFilesRequest, timeoutMs: number) => {
    let reply: unknown;
    try {
      const message = await link.get().nc.request(subjects.wsFiles, JSON.stringify(body), { timeout: timeoutMs });
      reply = message.json();
    } catch (error) {
      throw new HttpError(
        503,
        "executor_unavailable",
        `no tool-executor answered for ${body.workflow}:${body.tag}'s workspace directory (${(error as Error).message}): start a tool-executor and retry`,
        { "Retry-After": "2" },
      );
    }
    const parsed = workspaceFilesReplySchema.safeParse(reply);
    if (!parsed.success) throw new Error(`a tool-executor answered ${subjects.wsFiles} with an unreadable reply`);
    return parsed.data;
  };
  return {
    async setup(workflow, tag, steps) {
      const reply = await request(
        { op: "setup", workflow, tag, steps: [...steps] },
        PER_STEP_MS * steps.length + 5_000,
      );
      if (reply.ok) return reply.outputs;
      throw new HttpError(
        400,
        "setup_failed",
        `${reply.message}${reply.output ? `\n--- its output:\n${reply.output}` : ""}`,
        {},
        { ...(reply.step !== undefined ? { step: reply.step } : {}), output: reply.output ?? "" },
      );
    },
    // Each stops the instance's background processes first (SIGTERM, SIGKILL after the executors' kill grace).
    async remove(workflow, tag) {
      const reply = await request({ op: "remove", workflow, tag }, 15_000);
      if (!reply.ok) throw new Error(reply.message);
    },
    async stopProcesses(workflow, tag) {
      const reply = await request({ op: "stop", workflow, tag }, 15_000);
      if (!reply.ok) throw new Error(reply.message);
    },
  };
}
