import type { ChildHandle, ExitStatus } from "../child-handle.js";

/**
 * A child process that records the signals it gets. `exitOn` lists the
 * signals it obeys; others are ignored (like a process stuck in shutdown).
 */
export class FakeChild implements ChildHandle {
  readonly signals: NodeJS.Signals[] = [];
  readonly pid = 4242;
  readonly exited: Promise<ExitStatus>;
  private status: ExitStatus | undefined;
  private resolveExit!: (status: ExitStatus) => void;

  constructor(
    private readonly exitOn: NodeJS.Signals[] = ["SIGTERM", "SIGKILL"],
    private readonly log: string[] = [],
    readonly name = "child",
  ) {
    this.exited = new Promise((resolve) => {
      this.resolveExit = resolve;
    });
  }

  running(): boolean {
    return this.status === undefined;
  }

  kill(signal: NodeJS.Signals): void {
    if (!this.running()) return;
    this.signals.push(signal);
    this.log.push(`${this.name}:${signal}`);
    if (this.exitOn.includes(signal))
      this.exit({ code: signal === "SIGTERM" ? 0 : null, signal: signal === "SIGTERM" ? null : signal });
  }

  exit(status: ExitStatus): void {
    if (!this.running()) return;
    this.status = status;
    this.resolveExit(status);
  }
}
