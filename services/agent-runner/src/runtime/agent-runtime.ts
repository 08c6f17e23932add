import type { AgentState, ControlReply } from "@moniro/envelopes";
import type { AgentStateRecord, AgentStateStore, Fence, Inbox, Lease, RunEnd } from "@moniro/ports";
import type { LoopDeps } from "../loop/index.js";
import { LoopControl, type RunStart, readRunStart, runSupervised } from "../loop/index.js";
import type { AgentDirectory, RuntimeAgent } from "./agent-directory.js";
import { LeaseKeeper } from "./lease-keeper.js";
import type { RuntimeLogger } from "./logger.js";
import { errorFields, silentLogger } from "./logger.js";
import { WorkList } from "./work-list.js";

export interface RuntimeTiming {
  /** Lease TTL. With the sweep period it bounds how long a dead runner's agent waits: ttl + sweep. */
  leaseTtlMs: number;
  leaseRenewMs: number;
  /** How often every runner looks for agents with work and no lease holder. */
  sweepEveryMs: number;
  /** On shutdown, how long running steps may take to reach a step boundary before they are aborted. */
  shutdownGraceMs: number;
  /** How often a sweep also looks at every defined agent directly, not only at the indexes (WorkList). */
  reconcileEveryMs: number;
}

/** Defaults sized for "an agent of a SIGKILLed runner runs again elsewhere within 3 s". */
export const DEFAULT_TIMING: RuntimeTiming = {
  leaseTtlMs: 2_000,
  leaseRenewMs: 500,
  sweepEveryMs: 500,
  shutdownGraceMs: 5_000,
  reconcileEveryMs: 30_000,
};

export interface AgentRuntimeOptions {
  /** This runner's id: the lease holder name. */
  holder: string;
  lease: Lease;
  inbox: Inbox;
  state: AgentStateStore;
  directory: AgentDirectory;
  /** The loop's ports for one agent (the runtime wraps `state` to see step boundaries). */
  loopDeps: (agent: RuntimeAgent) => LoopDeps;
  /** Agents whose state says they have unfinished work (RedisAgentStateStore.activeAgents). */
  activeAgents?: () => Promise<string[]>;
  /** One agent's inputs and whether it has unfinished work, in one round trip (RedisAgentStateStore.pendingWork). */
  pendingWork?: (agent: string) => Promise<{ inputs: number; active: boolean; quarantined?: number }>;
  /** Hands an agent's quarantined inbox entries to the DLQ again (WorkListOptions.retryQuarantined). */
  retryQuarantined?: (agent: string) => Promise<void>;
  timing?: Partial<RuntimeTiming>;
  logger?: RuntimeLogger;
  /**
   * An agent left in `error` after too many crashes (its run just ended so, or
   * a sweep found it so): a sub-agent reports its failure to its parent here.
   * Called again for the same agent by later sweeps; it must be idempotent.
   */
  onGivenUp?: (agent: RuntimeAgent, why: string) => Promise<void>;
  /** A sweep found work for an agent the directory does not know (e.g. deleted): its inputs go to the DLQ here. */
  onUnknownWork?: (agent: string) => Promise<void>;
}

export type WakeResult = "started" | "running-here" | "held-elsewhere" | "unknown-agent" | "stopping";

/**
 * One agent on this runner, kept only while it is in use: a run, a lease
 * attempt, a pause (which must hold until resumed) or boundary waiters. An
 * idle agent has no Local (no per-agent memory while idle); `forget` drops it.
 */
interface Local {
  control: LoopControl;
  run: Promise<void> | undefined;
  fence: Fence | undefined;
  /** A lease attempt is in flight (so concurrent wakes do not race each other). */
  acquiring: boolean;
  /** A wake arrived while the run was going on (cleared as the loop's release goes out); taken up after an idle end. */
  wakeRequested: boolean;
  /** The loop last wrote `paused` (it is at a step boundary). */
  atBoundary: boolean;
  /** Renews the lease of the run in progress. */
  keeper: LeaseKeeper | undefined;
  boundaryWaiters: Array<() => void>;
}

/**
 * Runs agents on this runner (DESIGN §5 around the pure loop): takes an
 * agent's lease when input arrives, keeps it renewed while the loop runs
 * (the loop lets it go when idle, atomically with its last look at the
 * inbox, so no wakeup is lost), and sweeps for agents whose runner died.
 */
export class AgentRuntime {
  private readonly locals = new Map<string, Local>();
  private readonly timing: RuntimeTiming;
  private readonly logger: RuntimeLogger;
  private sweeper: NodeJS.Timeout | undefined;
  private sweeping = false;
  private stopping = false;
  private readonly warnedUnknown = new Set<string>();
  private readonly workList: WorkList;

  constructor(private readonly options: AgentRuntimeOptions) {
    this.timing = { ...DEFAULT_TIMING, ...options.timing };
    this.logger = options.logger ?? silentLogger;
    this.workList = new WorkList({
      inbox: options.inbox,
      state: options.state,
      ...(options.activeAgents ? { activeAgents: options.activeAgents } : {}),
      ...(options.pendingWork ? { pendingWork: options.pendingWork } : {}),
      ...(options.retryQuarantined ? { retryQuarantined: options.retryQuarantined } : {}),
      names: () => options.directory.names(),
      reconcileEveryMs: this.timing.reconcileEveryMs,
    });
  }

  get holder(): string {
    return this.options.holder;
  }

  /** Starts the sweeper (it also runs once at once, to pick up work left by a previous runner). */
  start(): void {
    if (this.sweeper || this.stopping) return;
    this.sweeper = setInterval(() => void this.sweepSafely(), this.timing.sweepEveryMs);
    this.sweeper.unref();
    void this.sweepSafely();
  }

  /** Agents whose loop runs here now. */
  running(): string[] {
    return [...this.locals.entries()].filter(([, local]) => local.run).map(([agent]) => agent);
  }

  /** Agents this runner keeps anything for (running, taking the lease, paused); an idle agent is not among them. */
  tracked(): string[] {
    return [...this.locals.keys()];
  }

  /** The fence under which an agent runs here, if it does. */
  fenceOf(agent: string): Fence | undefined {
    return this.locals.get(agent)?.fence;
  }

  /** Resolves when the agent's current run here (if any) has ended. */
  async settled(agent: string): Promise<void> {
    await this.locals.get(agent)?.run;
  }

  /**
   * Input arrived for `agent` (already in its inbox): take the lease and run
   * the loop here; when someone else holds it, their checkpoint drains it.
   */
  async wake(agent: string): Promise<WakeResult> {
    if (this.stopping) return "stopping";
    const definition = await this.definitionOf(agent);
    if (!definition) return "unknown-agent";
    const local = this.local(agent);
    if (local.run || local.acquiring) {
      local.wakeRequested = true;
      local.control.notifyInput();
      return "running-here";
    }
    local.acquiring = true;
    let fence: Fence | null;
    let start: RunStart | null | undefined;
    try {
      // The run's first reads go out right behind the lease attempt, in the same round trip; the
      // thread is read only if the attempt won (a read that fails is done again by the run).
      const acquired = this.options.lease.acquire(agent, this.holder, this.timing.leaseTtlMs);
      const ahead = readRunStart(this.options.loopDeps(definition), agent, definition.settings, this.holder);
      [fence, start] = await Promise.all([acquired, ahead.catch(() => undefined)]);
    } finally {
      local.acquiring = false;
    }
    if (!fence || this.stopping) {
      this.forget(agent, local);
      if (!fence) return "held-elsewhere";
      await this.options.lease.release(fence);
      return "stopping";
    }
    this.startRun(local, definition, fence, start ?? undefined);
    return "started";
  }

  /**
   * Another runner appended input for `agent`, which this runner holds: its running loop is told,
   * as if the input had been ingested here. False when it does not run here.
   */
  inputArrived(agent: string): boolean {
    const local = this.locals.get(agent);
    if (!local?.run) return false;
    local.control.notifyInput();
    return true;
  }

  /** One sweep: agents with pending input or unfinished work and no lease holder are taken over. */
  async sweep(): Promise<void> {
    if (this.stopping) return;
    const { listed, pending } = await this.workList.collect();
    // Warn once per unknown agent while its work stays listed (the set stays as small as that list).
    for (const agent of this.warnedUnknown) if (!listed.has(agent)) this.warnedUnknown.delete(agent);
    for (const agent of listed) {
      if (this.stopping) return;
      const local = this.locals.get(agent);
      if (local?.run || local?.acquiring) continue;
      const definition = await this.definitionOf(agent);
      if (!definition) {
        await this.options.onUnknownWork?.(agent).catch((error: unknown) => {
          this.logger.warn({ agent, ...errorFields(error) }, "could not deal with work of an unknown agent");
        });
        if (!this.warnedUnknown.has(agent)) {
          this.warnedUnknown.add(agent);
          this.logger.warn(
            { agent, reason: this.options.directory.explainMissing(agent) },
            "work for an unknown agent",
          );
        }
        continue;
      }
      if (await this.options.lease.current(agent)) continue;
      const record = await this.options.state.get(agent);
      if (isGivenUp(record, definition)) {
        // A runner that died before its given-up agent was dealt with leaves that to this sweep.
        await this.givenUp(definition, record?.error ?? "it crashed too often");
        continue;
      }
      const result = await this.wake(agent);
      if (result === "started") {
        this.logger.info({ agent, state: record?.state ?? null, pending: pending.has(agent) }, "took agent over");
      }
    }
  }

  /**
   * `moniro.ctl.<agent>`. Returns null when another runner holds the agent:
   * its holder answers. Every runner receives the request.
   */
  async control(agent: string, op: "cancel" | "pause" | "resume", reason?: string): Promise<ControlReply | null> {
    const definition = await this.definitionOf(agent);
    if (!definition) return { ok: false, agent, op, error: this.options.directory.explainMissing(agent) };
    const running = this.locals.get(agent);
    if (running?.run) return this.controlLocal(agent, running, op, reason);
    if (await this.options.lease.current(agent)) return null;
    const record = await this.options.state.get(agent);
    const state: AgentState = record?.state ?? "idle";
    switch (op) {
      case "cancel":
        return { ok: false, agent, op, state, error: `agent '${agent}' is not working on anything: nothing to cancel` };
      case "pause": {
        // An agent nobody runs is paused by running it here, held at its first boundary.
        const local = this.local(agent);
        local.control.pause();
        const result = await this.wake(agent);
        if (result === "started" || result === "running-here") return { ok: true, agent, op, state: "paused" };
        // Not ours after all: the pause must not linger for a later run here.
        local.control.resume();
        this.forget(agent, local);
        if (result === "held-elsewhere") return null;
        return { ok: false, agent, op, state, error: `this runner is ${result}` };
      }
      case "resume": {
        if (state === "error" || state === "paused") {
          await this.options.state.update(agent, { state: "idle", restarts: 0, error: undefined });
        }
        const local = this.locals.get(agent);
        if (local) {
          local.control.resume();
          this.forget(agent, local);
        }
        await this.wake(agent);
        return { ok: true, agent, op, state: "idle" };
      }
    }
  }

  /**
   * Graceful stop: no more wakes or sweeps; running loops are held at their
   * next step boundary (the current LLM call or tool call finishes) for up to
   * the grace period, then stopped; their leases are released.
   */
  async stop(): Promise<void> {
    this.stopping = true;
    if (this.sweeper) clearInterval(this.sweeper);
    this.sweeper = undefined;
    const runs = [...this.locals.values()].filter((local) => local.run);
    for (const local of runs) local.control.pause();
    await withTimeout(
      Promise.all(runs.map((local) => Promise.race([local.run, this.boundary(local)]))),
      this.timing.shutdownGraceMs,
    );
    for (const local of runs) local.control.stop("runner shutting down");
    await Promise.all(runs.map((local) => local.run));
  }

  // ---- internals ----

  private async givenUp(definition: RuntimeAgent, why: string): Promise<void> {
    await this.options.onGivenUp?.(definition, why).catch((error: unknown) => {
      this.logger.warn({ agent: definition.name, ...errorFields(error) }, "could not deal with a given-up agent");
    });
  }

  /** A defined agent, or a sub-agent the directory loads (from Redis) on first sight. */
  private async definitionOf(agent: string): Promise<RuntimeAgent | undefined> {
    const { directory } = this.options;
    return directory.get(agent) ?? (await directory.load?.(agent));
  }

  private local(agent: string): Local {
    let local = this.locals.get(agent);
    if (!local) {
      local = {
        control: new LoopControl(),
        run: undefined,
        fence: undefined,
        acquiring: false,
        wakeRequested: false,
        atBoundary: false,
        boundaryWaiters: [],
        keeper: undefined,
      };
      this.locals.set(agent, local);
    }
    return local;
  }

  /** Drops an agent's Local once nothing needs it (a paused one keeps its pause until resumed). */
  private forget(agent: string, local: Local): void {
    if (local.run || local.acquiring || local.control.paused || local.boundaryWaiters.length > 0) return;
    if (this.locals.get(agent) === local) this.locals.delete(agent);
  }

  private startRun(local: Local, definition: RuntimeAgent, fence: Fence, start: RunStart | undefined): void {
    local.fence = fence;
    local.run = this.runHeld(local, definition, fence, start)
      .catch((error: unknown) => {
        this.logger.error({ agent: definition.name, ...errorFields(error) }, "agent run failed");
      })
      .finally(() => {
        local.run = undefined;
        local.fence = undefined;
        local.atBoundary = false;
        local.wakeRequested = false;
        // A run that ended is at a boundary too (graceful stop waits on either).
        for (const wake of local.boundaryWaiters.splice(0)) wake();
        this.forget(definition.name, local);
      });
  }

  /**
   * Runs the loop while the lease is held. An idle loop has released the
   * lease itself (RunEnd); any other end releases it here. After an idle
   * end, a wake that this runner answered "running-here" in the meantime
   * takes the lease again.
   */
  private async runHeld(
    local: Local,
    definition: RuntimeAgent,
    first: Fence,
    firstStart: RunStart | undefined,
  ): Promise<void> {
    const agent = definition.name;
    let fence: Fence = first;
    let start = firstStart;
    let current = definition;
    for (;;) {
      // The live registry: a run taken up again after an idle end uses the definition as it is now.
      const deps = this.depsFor(local, current);
      local.fence = fence;
      const keeper = new LeaseKeeper(
        this.options.lease,
        fence,
        { ttlMs: this.timing.leaseTtlMs, renewEveryMs: this.timing.leaseRenewMs },
        (why) => {
          this.logger.warn({ agent, epoch: fence.epoch, why }, "lease lost; stopping the loop");
          local.control.stop(why);
        },
        this.logger,
      );
      local.keeper = keeper;
      this.logger.debug({ agent, epoch: fence.epoch }, "loop started");
      let outcome: Awaited<ReturnType<typeof runSupervised>>;
      try {
        outcome = await runSupervised(deps, fence, current.settings, local.control, start);
        start = undefined;
      } finally {
        keeper.stop();
        local.keeper = undefined;
      }
      this.logger.debug({ agent, epoch: fence.epoch, reason: outcome.reason, cycles: outcome.cycles }, "loop returned");
      if (keeper.lost || outcome.reason === "lease-lost") return;
      if (outcome.reason === "stopped" && this.stopping) {
        // Shut down mid-instruction: the state says so (not the shutdown's "paused") until a runner
        // takes the agent over; written while this runner still holds the lease.
        await this.options.state
          .update(agent, { state: "stopped", holder: undefined })
          .catch((error: unknown) => this.logger.warn({ agent, ...errorFields(error) }, "could not record the stop"));
      }
      if (outcome.reason === "error") {
        await this.givenUp(current, outcome.error instanceof Error ? outcome.error.message : String(outcome.error));
      }
      // An idle loop has let the lease go already (RunEnd, atomically with its last look at the inbox).
      if (outcome.reason !== "idle") await this.options.lease.release(fence);
      if (outcome.reason === "error") {
        this.logger.error(
          { agent, restarts: outcome.restarts, ...errorFields(outcome.error) },
          "agent left in error after too many crashes; the resume control restarts it",
        );
        return;
      }
      if (outcome.reason === "stopped" || this.stopping) return;
      // Idle. Input that arrived after the release found the lease free, so its producer took it; but a
      // wake on this runner was answered "running-here" meanwhile and tried nothing: take the lease for it.
      if (!local.wakeRequested) return;
      local.wakeRequested = false;
      const next = await this.definitionOf(agent);
      // Deleted meanwhile: its inputs go to the DLQ (a sweep, or the runner that heard the deletion).
      if (!next) return;
      current = next;
      const taken = await this.options.lease.acquire(agent, this.holder, this.timing.leaseTtlMs);
      if (!taken) return;
      fence = taken;
    }
  }

  /** The loop's ports, with the state store observed for step boundaries (graceful shutdown). */
  private depsFor(local: Local, definition: RuntimeAgent): LoopDeps {
    const deps = this.options.loopDeps(definition);
    const { state, runEnd } = deps;
    const observed: AgentStateStore = {
      get: (agent) => state.get(agent),
      update: async (agent, patch) => {
        await state.update(agent, patch);
        // Paused (held at a step boundary) or crashed (waiting to restart): nothing is in flight.
        if (patch.state === "paused" || patch.state === "error") {
          local.atBoundary = true;
          for (const wake of local.boundaryWaiters.splice(0)) wake();
        } else if (patch.state !== undefined) {
          local.atBoundary = false;
        }
      },
    };
    // Wakes before the release are for input it sees; only a wake after it needs the lease taken again.
    const whileReleasing = async <T>(release: () => Promise<T>, outcome: (result: T) => string): Promise<T> => {
      local.wakeRequested = false;
      local.keeper?.hold();
      let released = false;
      try {
        const result = await release();
        released = outcome(result) === "released";
        return result;
      } finally {
        if (!released) local.keeper?.resume();
      }
    };
    const withEntries = runEnd.appendAndReleaseIfIdle?.bind(runEnd);
    const releasing: RunEnd = {
      releaseIfIdle: (fence, patch) =>
        whileReleasing(
          () => runEnd.releaseIfIdle(fence, patch),
          (result) => result,
        ),
      // A turn's last write with the run's end: the same hold on the keeper.
      ...(withEntries && {
        appendAndReleaseIfIdle: (fence, patch, write) =>
          whileReleasing(
            () => withEntries(fence, patch, write),
            (result) => result.outcome,
          ),
      }),
    };
    // The live registry: each cycle starts with the definition as it is then.
    const refresh = () => this.options.directory.get(definition.name);
    return { ...deps, state: observed, runEnd: releasing, refresh };
  }

  private boundary(local: Local): Promise<void> {
    if (local.atBoundary) return Promise.resolve();
    return new Promise((resolve) => local.boundaryWaiters.push(resolve));
  }

  private async controlLocal(
    agent: string,
    local: Local,
    op: "cancel" | "pause" | "resume",
    reason: string | undefined,
  ): Promise<ControlReply> {
    switch (op) {
      case "cancel": {
        const canceled = local.control.cancel(reason ?? "canceled by operator");
        const state = (await this.options.state.get(agent))?.state;
        return canceled
          ? { ok: true, agent, op, ...(state ? { state } : {}) }
          : {
              ok: false,
              agent,
              op,
              ...(state ? { state } : {}),
              error: `agent '${agent}' is between cycles: nothing to cancel`,
            };
      }
      case "pause":
        local.control.pause();
        return { ok: true, agent, op, state: "paused" };
      case "resume":
        local.control.resume();
        return { ok: true, agent, op, state: "running" };
    }
  }

  private async sweepSafely(): Promise<void> {
    if (this.sweeping) return;
    this.sweeping = true;
    try {
      await this.sweep();
    } catch (error) {
      this.logger.warn(errorFields(error), "sweep failed; retrying on the next tick");
    } finally {
      this.sweeping = false;
    }
  }
}

/** An agent the restart policy gave up on stays in `error` until the resume control resets it. */
function isGivenUp(record: AgentStateRecord | null, definition: RuntimeAgent): boolean {
  return record?.state === "error" && record.restarts >= definition.settings.restart.maxRestarts;
}

async function withTimeout(promise: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    promise,
    new Promise<void>((resolve) => {
      timer = setTimeout(resolve, ms);
    }),
  ]);
  if (timer) clearTimeout(timer);
}
