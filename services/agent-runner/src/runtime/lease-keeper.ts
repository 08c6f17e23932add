import type { Fence, Lease } from "@moniro/ports";
import type { RuntimeLogger } from "./logger.js";
import { errorFields } from "./logger.js";

export interface LeaseTiming {
  /** Lease TTL: how long a dead runner's agent stays blocked. */
  ttlMs: number;
  /** Renewal period; several renewals fit in one TTL so one slow round trip does not lose the lease. */
  renewEveryMs: number;
}

/**
 * Renews one fence while its loop runs. The lease counts as lost when a
 * renewal is refused (someone else holds it) or when no renewal has succeeded
 * for a whole TTL (Redis unreachable: it has expired by now, or will have by
 * the time anyone can take it); `onLost` then stops the loop.
 */
export class LeaseKeeper {
  private timer: NodeJS.Timeout | undefined;
  private lastRenewed: number;
  private renewing = false;
  private lostFlag = false;
  private held = false;

  constructor(
    private readonly lease: Lease,
    readonly fence: Fence,
    private readonly timing: LeaseTiming,
    private readonly onLost: (why: string) => void,
    private readonly logger: RuntimeLogger,
    private readonly now: () => number = Date.now,
  ) {
    this.lastRenewed = now();
    this.timer = setInterval(() => void this.tick(), timing.renewEveryMs);
    this.timer.unref();
  }

  get lost(): boolean {
    return this.lostFlag;
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  /**
   * While the loop may be giving the lease up (RunEnd), a refused renewal is
   * not a loss (it may be the release, not a takeover). Renewals go on
   * meanwhile: one racing the release cannot bring the lease back (renew
   * extends only the holder's own value), and a loop that goes on after all
   * (input arrived) has not let its lease run down while it looked. `resume`
   * when the loop goes on.
   */
  hold(): void {
    this.held = true;
  }

  resume(): void {
    this.held = false;
  }

  private async tick(): Promise<void> {
    if (this.renewing || this.lostFlag || !this.timer) return;
    this.renewing = true;
    const { agent, epoch } = this.fence;
    try {
      const renewed = await this.lease.renew(this.fence, this.timing.ttlMs);
      if (renewed) {
        this.lastRenewed = this.now();
      } else if (!this.held) {
        this.lose(`lease for agent '${agent}' (epoch ${epoch}) was taken over or expired`);
      }
    } catch (error) {
      const silentFor = this.now() - this.lastRenewed;
      this.logger.warn({ agent, epoch, silentForMs: silentFor, ...errorFields(error) }, "lease renewal failed");
      if (silentFor >= this.timing.ttlMs) {
        this.lose(`lease for agent '${agent}' (epoch ${epoch}) could not be renewed for ${silentFor} ms`);
      }
    } finally {
      this.renewing = false;
    }
  }

  private lose(why: string): void {
    if (this.lostFlag) return;
    this.lostFlag = true;
    this.stop();
    this.onLost(why);
  }
}
