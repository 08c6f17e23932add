import type { Queue } from "bullmq";
import { wantedSchedules } from "./definition-schedules.js";
import type { DefinitionsSource } from "./definitions-source.js";
import { removeDeletedAgentsSchedules } from "./deleted-agents.js";
import type { Logger } from "./logger.js";
import { type ReconcileResult, reconcileDefinitionSchedules } from "./reconcile.js";

/** What a run changed: the definitions' schedules, and the schedules of deleted agents it removed. */
export interface SyncResult extends ReconcileResult {
  /** `<agent>.<id>` of each `cron`-tool / API schedule removed because its agent was deleted. */
  deletedAgentSchedules: string[];
}

export interface DefinitionSync {
  /** Reads the definitions and reconciles now (after a run already going on); resolves with what changed. */
  syncNow(): Promise<SyncResult>;
  stop(): void;
}

/** A burst of changes is one run: a change waits this long for the next (services/scheduler/README.md). */
const CHANGE_SETTLE_MS = 100;
/** …and no longer than this after the burst's first change. */
const CHANGE_MAX_WAIT_MS = 1_000;

/**
 * Keeps the definition schedules in step with the definitions, and removes every schedule of a
 * deleted agent (deleted-agents.ts): at once (when
 * started), after the changes the source reports, and every `resyncMs` as a
 * safety net. A change runs once no other has come for CHANGE_SETTLE_MS (at
 * most CHANGE_MAX_WAIT_MS after the first of a burst): a gateway writing a thousand
 * definitions at its start caused a run per definition, each reading them all
 * (1.83 s of CPU and 76.3 MiB settled, against 1.33 s and 65.0 MiB). Runs never
 * overlap; changes that arrive during a run cause one more run. A failed run
 * (Redis away, directory unreadable) is logged and tried again after
 * `retryMs`; nothing is removed on a failed read.
 */
export function startDefinitionSync(options: {
  source: DefinitionsSource;
  queue: Queue;
  logger: Logger;
  resyncMs: number;
  onReconciled?(result: SyncResult): void;
  /** A run failed; another follows within `retryMs`. */
  onFailed?(error: Error): void;
  retryMs?: number;
}): DefinitionSync {
  const { source, queue, logger } = options;
  let running: Promise<SyncResult> | undefined;
  let again: Promise<SyncResult> | undefined;
  let stopped = false;

  async function once(): Promise<SyncResult> {
    const snapshot = await source.load();
    for (const problem of snapshot.problems) {
      logger.error({ where: source.where, problem }, "agent definition unreadable: its schedules are left as they are");
    }
    const result = await reconcileDefinitionSchedules(queue, wantedSchedules(snapshot.definitions), {
      keepAgents: new Set(snapshot.unreadable),
    });
    for (const failure of result.failed) {
      logger.error(
        { agent: failure.agent, schedule: failure.id, err: failure.error },
        `agent '${failure.agent}': schedule.cron: cannot schedule it (${failure.error}); fix 'cron' (5 fields, or 6 with seconds first) or 'tz' (an IANA zone) in its definition`,
      );
    }
    if (result.created.length + result.updated.length + result.removed.length > 0) {
      const { created, updated, removed } = result;
      logger.info({ created, updated, removed }, "definition schedules reconciled");
    }
    // After the definitions: a deleted agent's `cron`-tool and API schedules go too.
    const deletedAgentSchedules = source.deletedAt
      ? await removeDeletedAgentsSchedules(queue, source.deletedAt, logger)
      : [];
    options.onReconciled?.({ ...result, deletedAgentSchedules });
    return { ...result, deletedAgentSchedules };
  }

  function syncNow(): Promise<SyncResult> {
    if (!running) {
      running = once().finally(() => {
        running = undefined;
      });
      return running;
    }
    // One follow-up run covers every change that arrives while a run is going on.
    again ??= running
      .catch(() => undefined)
      .then(() => {
        again = undefined;
        return syncNow();
      });
    return again;
  }

  let retry: NodeJS.Timeout | undefined;
  const background = (why: string) => {
    if (stopped) return;
    clearTimeout(retry);
    syncNow().catch((error: Error) => {
      logger.warn({ err: error.message, why }, "could not reconcile definition schedules; trying again shortly");
      options.onFailed?.(error);
      if (stopped) return;
      // Sooner than the periodic re-read: a failed first run keeps the scheduler unready.
      retry = setTimeout(() => background("retry"), options.retryMs ?? 1_000);
      retry.unref();
    });
  };
  let changeTimer: NodeJS.Timeout | undefined;
  let burstStarted: number | undefined;
  const changed = () => {
    if (stopped) return;
    const now = Date.now();
    burstStarted ??= now;
    clearTimeout(changeTimer);
    changeTimer = setTimeout(
      () => {
        changeTimer = undefined;
        burstStarted = undefined;
        background("definitions changed");
      },
      Math.min(CHANGE_SETTLE_MS, Math.max(0, burstStarted + CHANGE_MAX_WAIT_MS - now)),
    );
    changeTimer.unref();
  };
  const unwatch = source.watch(changed);
  const timer = setInterval(() => background("periodic re-read"), options.resyncMs);
  timer.unref();
  background("start");
  return {
    syncNow,
    stop() {
      stopped = true;
      unwatch();
      clearInterval(timer);
      clearTimeout(retry);
      clearTimeout(changeTimer);
    },
  };
}
