import { decode, NAME_PATTERN, workspaceMemberSchema } from "@moniro/envelopes";
import { type Clock, systemClock, type WorkspaceRefusal } from "@moniro/ports";
import { corruptEntry } from "../errors.js";
import { createKeys, type Keys } from "../keys.js";
import type { RedisClient } from "../redis-client.js";
import { WorkspaceChannel } from "./workspace-channel.js";
import {
  checkInstance,
  checkMember,
  checkMembers,
  DEFAULT_WORKSPACE_LIMITS,
  runWorkspaceScript,
  type WorkspaceContext,
  type WorkspaceLimits,
} from "./workspace-context.js";
import { WorkspaceDocuments } from "./workspace-documents.js";
import { membersOf, readMemberView } from "./workspace-member-view.js";
import type {
  MemberView,
  MemberViewOptions,
  NamedMember,
  Workspace,
  WorkspaceState,
  WorkspaceStore,
} from "./workspace-port.js";
import { WorkspaceProposals } from "./workspace-proposals.js";

export interface RedisWorkspaceStoreOptions {
  prefix?: string;
  clock?: Clock;
  limits?: Partial<WorkspaceLimits>;
}

/**
 * Workflow instances (`<workflow>:<tag>`) over Redis: each instance's state,
 * members, channel, documents and proposals under one hash tag
 * (`{w:<workflow>:<tag>}`, so every script runs on a cluster), and a global
 * index of instances (`workspaces`, written beside, never in a script with
 * an instance's keys). Any gateway or runner sees the same instances.
 */
export class RedisWorkspaceStore implements WorkspaceStore {
  private readonly keys: Keys;
  private readonly clock: Clock;
  private readonly limits: WorkspaceLimits;

  constructor(
    private readonly redis: RedisClient,
    options: RedisWorkspaceStoreOptions = {},
  ) {
    this.keys = createKeys(options.prefix);
    this.clock = options.clock ?? systemClock;
    this.limits = { ...DEFAULT_WORKSPACE_LIMITS, ...options.limits };
  }

  /** One instance's store; the names are checked here (they become key parts). */
  instance(workflow: string, tag: string): WorkspaceInstance {
    checkInstance(workflow, tag);
    return new WorkspaceInstance(
      {
        redis: this.redis,
        keys: this.keys.workspace(workflow, tag),
        workflow,
        tag,
        clock: this.clock,
        limits: this.limits,
      },
      this.keys.workspaces,
    );
  }

  /** Every instance with state (running, or stopped and kept), by name. */
  async list(): Promise<WorkspaceState[]> {
    const names = (await this.redis.smembers(this.keys.workspaces)).sort();
    const states = await Promise.all(
      names.map(async (name) => {
        const [workflow = "", tag = ""] = name.split(":");
        if (!NAME_PATTERN.test(workflow) || !NAME_PATTERN.test(tag)) return null;
        return this.instance(workflow, tag).state();
      }),
    );
    return states.filter((state): state is WorkspaceState => state !== null);
  }
}

/** The store of one instance: lifecycle and members here; channel, documents, proposals beside. */
export class WorkspaceInstance implements Workspace {
  readonly channel: WorkspaceChannel;
  readonly documents: WorkspaceDocuments;
  readonly proposals: WorkspaceProposals;

  constructor(
    private readonly context: WorkspaceContext,
    private readonly indexKey: string,
  ) {
    this.channel = new WorkspaceChannel(context);
    this.documents = new WorkspaceDocuments(context);
    this.proposals = new WorkspaceProposals(context);
  }

  get name(): string {
    return `${this.context.workflow}:${this.context.tag}`;
  }

  /**
   * Marks the instance running with these members. Idempotent: a running
   * instance is left as it is (`started: false`). A stopped, kept instance
   * resumes with its channel and documents and the members given now.
   */
  async start(members: readonly NamedMember[]): Promise<{ started: boolean }> {
    const pairs = checkMembers(this.name, members).flatMap(({ name, ...member }) => [name, JSON.stringify(member)]);
    const { keys, redis, clock } = this.context;
    const [result] = await Promise.all([
      runWorkspaceScript(this.context, "startWorkspace", [keys.state, keys.members], [clock.now(), ...pairs]),
      // The index beside the state (another slot on a cluster); a stale entry is skipped by `list`.
      redis.sadd(this.indexKey, this.name),
    ]);
    return { started: result === 1 };
  }

  /** Marks the instance stopped; its data stays until `discard`. Idempotent (`stopped: false`). */
  async stop(): Promise<{ stopped: boolean }> {
    const result = await runWorkspaceScript(
      this.context,
      "stopWorkspace",
      [this.context.keys.state],
      [this.context.clock.now()],
    );
    return { stopped: result === 1 };
  }

  /** Deletes every key of a stopped instance (an ephemeral workspace at stop); refused while it runs. */
  async discard(): Promise<void> {
    const { keys } = this.context;
    await runWorkspaceScript(
      this.context,
      "discardWorkspace",
      [
        keys.state,
        keys.members,
        keys.channel,
        keys.seen,
        keys.mentions,
        keys.docs,
        keys.docMeta,
        keys.proposals,
        keys.proposalStatus,
        keys.votes,
      ],
      [],
    );
    await this.context.redis.srem(this.indexKey, this.name);
  }

  /** The instance's state, or null when it has none (never started, or discarded). */
  async state(): Promise<WorkspaceState | null> {
    const { redis, keys, workflow, tag } = this.context;
    const [hash, members] = await Promise.all([redis.hgetall(keys.state), this.members()]);
    if (hash.status !== "running" && hash.status !== "stopped") return null;
    return {
      workflow,
      tag,
      status: hash.status,
      createdAt: Number(hash.createdAt ?? 0),
      startedAt: Number(hash.startedAt ?? 0),
      ...(hash.stoppedAt !== undefined ? { stoppedAt: Number(hash.stoppedAt) } : {}),
      members,
    };
  }

  async isRunning(): Promise<boolean> {
    return (await this.context.redis.hget(this.context.keys.state, "status")) === "running";
  }

  /** The members, by name. */
  async members(): Promise<NamedMember[]> {
    return membersOf(this.context.keys.members, await this.context.redis.hgetall(this.context.keys.members));
  }

  /** What the member `agent` plays sees in a cycle here: one script (`readWorkspace-6.lua`), one round trip. */
  async memberView(agent: string, options: MemberViewOptions): Promise<MemberView | { refused: WorkspaceRefusal }> {
    return readMemberView(this.context, agent, options);
  }

  /** One member, or undefined. */
  async member(name: string): Promise<NamedMember | undefined> {
    const json = await this.context.redis.hget(this.context.keys.members, checkMember(name));
    if (json === null) return undefined;
    const decoded = decode(workspaceMemberSchema, json, "workspace member");
    if (!decoded.ok) throw corruptEntry(this.context.keys.members, name, decoded.error.message);
    return { name, ...decoded.value };
  }
}
