/** Why the loop aborted a stream, a tool call or a sleep. */
export class LoopAbort extends Error {
  constructor(
    readonly kind: "cancel" | "stop" | "interrupt",
    readonly detail: string,
  ) {
    super(`${kind}: ${detail}`);
    this.name = "LoopAbort";
  }
}

/**
 * Signals from outside into a running loop: the runtime receives
 * `moniro.ctl.<agent>` (cancel / pause / resume), learns of new input
 * (notifyInput: the loop reads its inbox at once, inbox-ahead.ts and, in queue
 * mode `interrupt`, interrupt.ts) and stops the loop on
 * shutdown or lease loss (stop). One LoopControl per agent on a runner; it
 * outlives `runAgent` calls, so a pause holds until resumed.
 */
export class LoopControl {
  private pausedFlag = false;
  private resumeWaiters: Array<() => void> = [];
  private run: AbortController | undefined;
  private cycle: AbortController | undefined;
  /** Removes the cycle's listener on the run's signal. */
  private unlinkCycle: (() => void) | undefined;
  private inputListeners = new Set<() => void>();
  private stopper = new AbortController();

  /** Ends the running cycle: the running call is aborted, the rest of the step is cancelled. False when idle. */
  cancel(reason = "canceled by operator"): boolean {
    if (!this.cycle || this.cycle.signal.aborted) return false;
    this.cycle.abort(new LoopAbort("cancel", reason));
    this.wakePaused();
    return true;
  }

  /** Holds the loop at the next step boundary. */
  pause(): void {
    this.pausedFlag = true;
  }

  resume(): void {
    this.pausedFlag = false;
    this.wakePaused();
  }

  get paused(): boolean {
    return this.pausedFlag;
  }

  /** Stops the current `runAgent` at once, writing nothing more (shutdown, lease lost). */
  stop(reason = "stopped"): void {
    const abort = new LoopAbort("stop", reason);
    this.run?.abort(abort);
    this.stopper.abort(abort);
    this.wakePaused();
  }

  /** The runtime calls this after appending an input to the agent's inbox. */
  notifyInput(): void {
    for (const listener of [...this.inputListeners]) listener();
  }

  // ---- used by the loop ----

  /** @internal Starts a run; returns its signal (aborted by stop). */
  beginRun(): AbortSignal {
    this.run = new AbortController();
    return this.run.signal;
  }

  /** @internal A signal the next stop() aborts, for waits between runs (restart backoff). */
  stopSignal(): AbortSignal {
    if (this.stopper.signal.aborted) this.stopper = new AbortController();
    return this.stopper.signal;
  }

  /** @internal */
  endRun(): void {
    this.run = undefined;
  }

  /**
   * @internal Starts a cycle; the signal aborts on cancel or stop (the run's abort is passed on
   * by a listener removed at endCycle: `AbortSignal.any` would cost every cycle weak references
   * and finalizers for the garbage collector, issue 17).
   */
  beginCycle(): AbortSignal {
    const cycle = new AbortController();
    this.cycle = cycle;
    const run = this.run?.signal;
    if (run?.aborted) cycle.abort(run.reason);
    else if (run) {
      const passOn = () => cycle.abort(run.reason);
      run.addEventListener("abort", passOn, { once: true });
      this.unlinkCycle = () => run.removeEventListener("abort", passOn);
    }
    return cycle.signal;
  }

  /** @internal */
  endCycle(): void {
    this.unlinkCycle?.();
    this.unlinkCycle = undefined;
    this.cycle = undefined;
  }

  /** @internal Resolves when not paused (or the run stops: then without `onResume`). */
  async whilePaused(onPause: () => Promise<void>, onResume: () => Promise<void>): Promise<void> {
    if (!this.pausedFlag) return;
    await onPause();
    while (this.pausedFlag && !this.run?.signal.aborted && !this.cycle?.signal.aborted) {
      await new Promise<void>((resolve) => this.resumeWaiters.push(resolve));
    }
    // A stopped run (shutdown, lease lost) does not go on: it must not say "running" again.
    if (this.run?.signal.aborted) return;
    await onResume();
  }

  private wakePaused(): void {
    for (const wake of this.resumeWaiters.splice(0)) wake();
  }

  /** @internal */
  onInput(listener: () => void): () => void {
    this.inputListeners.add(listener);
    return () => this.inputListeners.delete(listener);
  }
}
