/** Why a running call was stopped early. */
export type StopReason = { kind: "canceled"; detail: string } | { kind: "deadline" } | { kind: "shutdown" };

type Stop = (reason: StopReason) => void;

/**
 * The calls this executor is running, by callId, so `moniro.tool.cancel.<callId>`
 * can stop one and shutdown can stop all. A cancel that arrives before its
 * call is remembered for `rememberMs`, so the late call is refused.
 */
export class RunningCalls {
  private readonly running = new Map<string, Stop>();
  private readonly earlyCancels = new Map<string, { detail: string; until: number }>();

  constructor(
    private readonly now: () => number = Date.now,
    private readonly rememberMs = 60_000,
  ) {}

  get size(): number {
    return this.running.size;
  }

  /** Registers a call; returns undefined when it was canceled before it arrived. */
  add(callId: string, stop: Stop): { detail: string } | undefined {
    const early = this.earlyCancels.get(callId);
    if (early && early.until > this.now()) {
      this.earlyCancels.delete(callId);
      return { detail: early.detail };
    }
    this.running.set(callId, stop);
    return undefined;
  }

  remove(callId: string): void {
    this.running.delete(callId);
  }

  /** Stops a running call; unknown ids are remembered for a while (the cancel may beat the call). */
  cancel(callId: string, detail: string): boolean {
    const stop = this.running.get(callId);
    if (stop) {
      stop({ kind: "canceled", detail });
      return true;
    }
    this.prune();
    this.earlyCancels.set(callId, { detail, until: this.now() + this.rememberMs });
    return false;
  }

  stopAll(reason: StopReason): void {
    for (const stop of this.running.values()) stop(reason);
  }

  private prune(): void {
    const now = this.now();
    for (const [callId, early] of this.earlyCancels) if (early.until <= now) this.earlyCancels.delete(callId);
  }
}
