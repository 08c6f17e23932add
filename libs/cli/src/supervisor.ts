import type { ChildHandle, ExitStatus } from "./child-handle.js";

export interface SupervisedChild {
  name: string;
  handle: ChildHandle;
  /** Services stop first, then the servers they use. */
  tier: "service" | "server";
}

export interface StopReport {
  name: string;
  status: ExitStatus;
  /** True when SIGTERM was not enough within the grace period. */
  killed: boolean;
}

const wait = (ms: number) =>
  new Promise<"timeout">((resolve) => {
    const timer = setTimeout(() => resolve("timeout"), ms);
    timer.unref?.();
  });

/**
 * Owns the children `moniro up` started. `stopAll` sends SIGTERM to every
 * service, SIGKILLs the ones still running after `graceMs`, then does the same
 * for the servers (NATS, Redis) it started. Safe to call twice.
 */
export class Supervisor {
  private readonly children: SupervisedChild[] = [];
  private stopping: Promise<StopReport[]> | undefined;

  constructor(private readonly graceMs = 10_000) {}

  add(child: SupervisedChild): void {
    this.children.push(child);
  }

  list(): readonly SupervisedChild[] {
    return this.children;
  }

  get isStopping(): boolean {
    return this.stopping !== undefined;
  }

  stopAll(): Promise<StopReport[]> {
    this.stopping ??= (async () => {
      const services = await this.stopTier("service");
      const servers = await this.stopTier("server");
      return [...services, ...servers];
    })();
    return this.stopping;
  }

  private async stopTier(tier: SupervisedChild["tier"]): Promise<StopReport[]> {
    const members = this.children.filter((c) => c.tier === tier);
    return Promise.all(members.map((child) => this.stopOne(child)));
  }

  private async stopOne(child: SupervisedChild): Promise<StopReport> {
    if (!child.handle.running()) return { name: child.name, status: await child.handle.exited, killed: false };
    child.handle.kill("SIGTERM");
    const first = await Promise.race([child.handle.exited, wait(this.graceMs)]);
    if (first !== "timeout") return { name: child.name, status: first, killed: false };
    child.handle.kill("SIGKILL");
    return { name: child.name, status: await child.handle.exited, killed: true };
  }
}
