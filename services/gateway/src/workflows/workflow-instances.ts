import { basename, join } from "node:path";
import {
  type AgentDefinition,
  displayPath,
  kickoffValues,
  renderKickoff,
  resolveWorkflowInstance,
  type WorkflowDefinition,
  WorkflowInstanceError,
  workflowNameSchema,
} from "@moniro/config";
import { DEFAULT_TAG, type InboundEnvelope, refusalText, workflowNotRunning } from "@moniro/envelopes";
import { type AgentRegistry, definitionOf, RegistryNotFoundError, registryFieldsOf } from "@moniro/registry";
import type { PostResult } from "@moniro/store";
import {
  type NamedMember,
  postToChannel,
  WorkspaceError,
  type WorkspaceState,
  type WorkspaceStore,
  workspaceContext,
} from "@moniro/store";
import { type ErrorCode, HttpError } from "../http/http-error.js";
import { mentionsNotDelivered } from "../http/mentions-not-delivered.js";
import type { GatewayLogger } from "../ports.js";
import type { AgentStateCleanup } from "./agent-state-cleanup.js";
import type { InstanceLock } from "./instance-lock.js";
import type { WorkflowSet, WorkflowSource } from "./workflow-source.js";

/** The shared directories of instances, on the tool-executors (`<ns>.ws.files`). */
export interface WorkspaceFiles {
  /** Creates the directory and runs the steps in it; the `as:` outputs. Throws `setup_failed` (removing the directory). */
  setup(
    workflow: string,
    tag: string,
    steps: ReadonlyArray<{ shell: string; as?: string | undefined }>,
  ): Promise<Record<string, string>>;
  /** Stops the background processes started in the instance's context, then removes the directory. */
  remove(workflow: string, tag: string): Promise<void>;
  /** Stops the background processes started in the instance's context; the directory stays (a persistent stop). */
  stopProcesses(workflow: string, tag: string): Promise<void>;
}

export interface WorkflowInstancesDeps {
  source: Pick<WorkflowSource, "load" | "dir">;
  registry: () => Promise<AgentRegistry>;
  store: WorkspaceStore;
  lock: Pick<InstanceLock, "run">;
  cleanup: Pick<AgentStateCleanup, "removeAgent" | "removeThread">;
  files: WorkspaceFiles;
  /** Publishes an inbound envelope durably (the kickoff's and the channel's @mentions). */
  publish(envelope: InboundEnvelope): Promise<void>;
  logger: GatewayLogger;
}

export interface InstanceView extends WorkspaceState {
  instance: string;
}

export interface StartResult {
  started: boolean;
  instance: InstanceView;
  kickoff?: PostResult;
}

export interface StopResult {
  instance: string;
  stopped: boolean;
  discarded: boolean;
  removedAgents: string[];
}

/** The poster of a kickoff: `workflow:<name>`. */
export const kickoffSender = (workflow: string): string => `workflow:${workflow}`;

const view = (state: WorkspaceState): InstanceView => ({ instance: `${state.workflow}:${state.tag}`, ...state });

function instanceError(error: WorkflowInstanceError): HttpError {
  return new HttpError(400, error.code, error.message);
}

const WORKSPACE_HTTP_CODES = [
  "workflow_not_running",
  "not_a_member",
  "post_too_large",
  "empty_post",
  "workspace_running",
  "bad_member",
  "bad_instance",
  "bad_cursor",
] as const;

/** Workspace errors of a request → 4xx naming what is wrong. */
export function workspaceHttpError(error: unknown): unknown {
  const notWoken = mentionsNotDelivered(error);
  if (notWoken) return notWoken;
  if (!(error instanceof WorkspaceError)) return error;
  const status = error.code === "workflow_not_running" ? 404 : error.code === "workspace_running" ? 409 : 400;
  const message = error.hint ? `${error.message}\n${error.hint}` : error.message;
  const code: ErrorCode = (WORKSPACE_HTTP_CODES as readonly string[]).includes(error.code)
    ? (error.code as ErrorCode)
    : "bad_request";
  return new HttpError(status, code, message);
}

/**
 * Workflow instances `<workflow>:<tag>` (docs/workflows.md "Instances"): start
 * and stop, idempotent and serialized per instance across gateway replicas;
 * state in Redis (the workspace store), inline agents in the registry (source
 * `workflow`). Every gateway replica answers the same.
 */
export class WorkflowInstances {
  constructor(private readonly deps: WorkflowInstancesDeps) {}

  /** The definitions and the files that did not load. */
  definitions(): Promise<WorkflowSet> {
    return this.deps.source.load();
  }

  async workflow(name: string): Promise<WorkflowDefinition> {
    const { workflows, problems, projectFile } = await this.deps.source.load();
    const workflow = workflows.get(name);
    if (workflow) return workflow;
    // Its file is there but does not load: say what is wrong with it, not that it does not exist.
    const problem = problems.find((item) => [`${name}.yaml`, `${name}.yml`].includes(basename(item.file)));
    if (problem) {
      throw new HttpError(
        400,
        "invalid_workflow",
        `workflow '${name}' cannot start: its file does not load: ${problem.message} (fix the file; GET /v1/workflows lists every problem)`,
      );
    }
    const known = [...workflows.keys()];
    throw new HttpError(
      404,
      "unknown_workflow",
      `no workflow named '${name}' is defined; known workflows: ${known.length > 0 ? known.join(", ") : "none"} (${
        projectFile === undefined
          ? `add ${this.missingFile(name)}`
          : `register it under 'workflows:' in ${displayPath(projectFile)}${problems.length > 0 ? "; that file does not load now: GET /v1/workflows lists its problems" : ""}`
      })`,
    );
  }

  /** Where a workflow not defined yet goes: `<MONIRO_WORKFLOWS_DIR>/<name>.yaml`, as the gateway sees it. */
  private missingFile(name: string): string {
    return displayPath(join(this.deps.source.dir, `${name}.yaml`));
  }

  /**
   * The file a hint names for workflow `name`: the one that defines it, else
   * the moniro.yaml that would register it, else `<MONIRO_WORKFLOWS_DIR>/<name>.yaml`.
   */
  async fileOf(name: string): Promise<string> {
    const { workflows, projectFile } = await this.deps.source.load();
    const file = workflows.get(name)?.file ?? projectFile;
    return file === undefined ? this.missingFile(name) : displayPath(file);
  }

  private checkNames(workflow: string, tag: string): void {
    const name = workflowNameSchema.safeParse(workflow);
    if (!name.success) {
      throw new HttpError(
        404,
        "unknown_workflow",
        `'${workflow}' is not a workflow name: ${name.error.issues[0]?.message}`,
      );
    }
    try {
      this.deps.store.instance(workflow, tag);
    } catch (error) {
      // The store's message names the tag and the rule: "tag 'X' must be 1-63 characters of …".
      throw new HttpError(400, "bad_tag", (error as Error).message);
    }
  }

  async get(workflow: string, tag: string): Promise<InstanceView> {
    this.checkNames(workflow, tag);
    const state = await this.deps.store.instance(workflow, tag).state();
    if (state === null) {
      throw new HttpError(
        404,
        "unknown_instance",
        `${workflow}:${tag} has no state: it was never started, or it stopped and was discarded; start it with POST /v1/workflows/${workflow}/instances`,
      );
    }
    return view(state);
  }

  async list(): Promise<InstanceView[]> {
    return (await this.deps.store.list()).map(view);
  }

  /**
   * Starts `<workflow>:<tag>`: resolves the refs against the registry,
   * registers the inline agents, stores the members, posts the kickoff. A
   * running instance is left as it is (`started: false`). Any failure undoes
   * what this start did.
   */
  async start(
    name: string,
    input: { tag?: string | undefined; variables?: Record<string, string> | undefined },
  ): Promise<StartResult> {
    const tag = input.tag ?? DEFAULT_TAG;
    const workflow = await this.workflow(name);
    this.checkNames(name, tag);
    // The lease covers the setup steps (each up to the executor's 60 s default) plus the rest.
    const leaseMs = 60_000 + workflow.setup.length * 65_000;
    return this.deps.lock.run(
      name,
      tag,
      async () => {
        const workspace = this.deps.store.instance(name, tag);
        const existing = await workspace.state();
        if (existing?.status === "running") return { started: false, instance: view(existing) };
        const registry = await this.deps.registry();
        const agents = new Map<string, AgentDefinition>(
          registry
            .list()
            .filter((record) => record.source !== "workflow")
            .map((record) => [record.name, definitionOf(record)]),
        );
        let resolved: ReturnType<typeof resolveWorkflowInstance>;
        try {
          resolved = resolveWorkflowInstance(workflow, agents, tag);
          kickoffValues(workflow, tag, input.variables ?? {});
        } catch (error) {
          if (error instanceof WorkflowInstanceError) throw instanceError(error);
          throw error;
        }
        // Setup first: a failing step (the executor removes the directory) leaves nothing else to undo.
        const outputs = workflow.setup.length > 0 ? await this.deps.files.setup(name, tag, workflow.setup) : {};
        let kickoff: string | undefined;
        try {
          const values = kickoffValues(workflow, tag, input.variables ?? {}, outputs);
          if (workflow.kickoff !== undefined) kickoff = renderKickoff(workflow.kickoff, values);
        } catch (error) {
          if (workflow.setup.length > 0) await this.removeFiles(name, tag);
          if (error instanceof WorkflowInstanceError) throw instanceError(error);
          if (error instanceof Error && error.name === "KickoffVariableError") {
            throw new HttpError(400, "missing_variable", error.message);
          }
          throw error;
        }
        const inline = resolved.agents.filter((agent) => agent.kind === "inline");
        const registered: string[] = [];
        let stored = false;
        try {
          for (const agent of inline) {
            await registry.put(agent.agent, registryFieldsOf(agent.definition), { source: "workflow" });
            registered.push(agent.agent);
          }
          const members: NamedMember[] = resolved.agents.map((agent) => ({
            name: agent.name,
            agent: agent.agent,
            kind: agent.kind,
            ...(agent.role !== undefined ? { role: agent.role } : {}),
            ...(agent.promptAppend !== undefined ? { promptAppend: agent.promptAppend } : {}),
          }));
          await workspace.start(members);
          stored = true;
          const posted =
            kickoff === undefined
              ? undefined
              : await postToChannel(
                  { publish: this.deps.publish },
                  { instance: workspace, workflow: name, tag },
                  {
                    from: kickoffSender(name),
                    text: kickoff,
                  },
                );
          const state = await workspace.state();
          if (state === null) throw new Error(`${name}:${tag} lost its state while starting`);
          this.deps.logger.info({ instance: `${name}:${tag}`, members: members.length }, "workflow instance started");
          return { started: true, instance: view(state), ...(posted ? { kickoff: posted } : {}) };
        } catch (error) {
          this.deps.logger.error(
            { instance: `${name}:${tag}`, err: (error as Error)?.message },
            "workflow start failed; undoing it",
          );
          await this.undo(workspace, stored && !resolved.persistent, registered, existing !== null, `${name}:${tag}`);
          if (workflow.setup.length > 0 && (!resolved.persistent || existing === null))
            await this.removeFiles(name, tag);
          throw workspaceHttpError(error);
        }
      },
      leaseMs,
    );
  }

  private async undo(
    workspace: ReturnType<WorkspaceStore["instance"]>,
    discard: boolean,
    registered: readonly string[],
    hadState: boolean,
    instance: string,
  ): Promise<void> {
    const registry = await this.deps.registry();
    const why = (agent: string) =>
      `agent '${agent}' (an inline agent of ${instance}) was removed when its instance failed to start: it takes no new input`;
    await Promise.allSettled(registered.map((agent) => this.removeInline(registry, agent, why(agent))));
    await workspace.stop().catch(() => undefined);
    if (discard || !hadState) await workspace.discard().catch(() => undefined);
  }

  /** Removes the shared directory on the executors; a failure is logged (nothing else depends on it). */
  private async removeFiles(workflow: string, tag: string): Promise<void> {
    await this.deps.files.remove(workflow, tag).catch((error: unknown) => {
      this.deps.logger.warn(
        { instance: `${workflow}:${tag}`, err: (error as Error)?.message },
        "workspace directory not removed",
      );
    });
  }

  /** A kept instance's background processes, on the executors; a failure is logged, as for the directory. */
  private async stopProcesses(workflow: string, tag: string): Promise<void> {
    await this.deps.files.stopProcesses(workflow, tag).catch((error: unknown) => {
      this.deps.logger.warn(
        { instance: `${workflow}:${tag}`, err: (error as Error)?.message },
        "background processes of the stopped instance not stopped",
      );
    });
  }

  /**
   * Removes an inline agent: its registry record, then its Redis keys; the
   * inputs still queued for it go to the DLQ with `reason` first (cleanup).
   */
  private async removeInline(registry: AgentRegistry, agent: string, reason: string): Promise<void> {
    try {
      await registry.remove(agent);
    } catch (error) {
      if (!(error instanceof RegistryNotFoundError)) throw error;
    }
    await this.deps.cleanup.removeAgent(agent, reason);
  }

  /**
   * Stops `<workflow>:<tag>`: ref agents are detached (their loop and inbox
   * stay), inline agents are removed (registry record and Redis state); an
   * ephemeral workspace is discarded (channel, documents, state, and the ref
   * agents' threads of its context), a persistent one is kept for the next start.
   */
  async stop(name: string, tag: string): Promise<StopResult> {
    this.checkNames(name, tag);
    return this.deps.lock.run(name, tag, async () => {
      const workspace = this.deps.store.instance(name, tag);
      const state = await workspace.state();
      const result: StopResult = { instance: `${name}:${tag}`, stopped: false, discarded: false, removedAgents: [] };
      if (state === null || state.status !== "running") return result;
      // Persistent unless the definition (still there) says ephemeral: a vanished definition keeps the data.
      const { workflows } = await this.deps.source.load();
      const persistent = workflows.get(name)?.workspace.persistent ?? true;
      await workspace.stop();
      result.stopped = true;
      const registry = await this.deps.registry();
      for (const member of state.members.filter((member) => member.kind === "inline")) {
        await this.removeInline(
          registry,
          member.agent,
          `agent '${member.agent}' (an inline agent of ${name}:${tag}) was removed when its instance stopped: it takes no new input`,
        );
        result.removedAgents.push(member.agent);
      }
      if (!persistent) {
        const context = workspaceContext(name, tag);
        await Promise.all(
          state.members
            .filter((member) => member.kind === "ref")
            .map((member) => this.deps.cleanup.removeThread(member.agent, context)),
        );
        await workspace.discard();
        await this.removeFiles(name, tag);
        result.discarded = true;
      } else {
        await this.stopProcesses(name, tag);
      }
      this.deps.logger.info({ instance: result.instance, discarded: result.discarded }, "workflow instance stopped");
      return result;
    });
  }

  /** A person's post to a running instance's channel, as `http:<from>`. */
  async post(name: string, tag: string, input: { from: string; text: string }): Promise<PostResult> {
    this.checkNames(name, tag);
    const workspace = this.deps.store.instance(name, tag);
    if (!(await workspace.isRunning())) {
      throw new HttpError(404, "workflow_not_running", refusalText(workflowNotRunning(name, tag)));
    }
    try {
      return await postToChannel(
        { publish: this.deps.publish },
        { instance: workspace, workflow: name, tag },
        {
          from: `http:${input.from}`,
          text: input.text,
        },
      );
    } catch (error) {
      throw workspaceHttpError(error);
    }
  }
}
