import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { OutboundEnvelopeInput } from "@moniro/envelopes";
import type { PersonalContext } from "@moniro/ports";
import { InMemoryPersonalContext } from "@moniro/ports/test";
import { onTestFinished } from "vitest";
import { detectSandbox, type ExecSandbox } from "../exec/sandbox.js";
import { type ExecLimitsInput, execLimits } from "../limits.js";
import { ProcessRegistry } from "../process/process-registry.js";
import type { SchedulerOp, TeamPort, ToolContext } from "../tool.js";

export interface TestToolContext extends ToolContext {
  /** Envelopes given to publishOutbound, in order. */
  published: OutboundEnvelopeInput[];
  /** Requests given to requestScheduler, in order. */
  schedulerRequests: { op: SchedulerOp; request: unknown }[];
  abort: AbortController;
}

export interface TestToolContextOptions {
  workspace?: string;
  /** Default: a fresh InMemoryPersonalContext. */
  personal?: PersonalContext;
  agent?: string;
  context?: string;
  replyTo?: string;
  inReplyTo?: string;
  limits?: ExecLimitsInput;
  processes?: ProcessRegistry;
  /** Default: bubblewrap when bwrap is installed (detectSandbox). */
  sandbox?: ExecSandbox;
  /** The agent's policy gives its commands the network. */
  network?: boolean;
  /** Channels no bridge serves, with the reason `checkOutbound` gives (every other channel is served). */
  unserved?: Record<string, string>;
  /** Workflow instances' workspaces (team tools, shared directories); default none. */
  team?: TeamPort;
  /** The scheduler's answer (value or function); throw to simulate no scheduler. */
  scheduler?: (op: SchedulerOp, request: unknown) => Promise<unknown> | unknown;
}

/** A fresh directory under the OS temporary directory, deleted when the test that made it ends (made outside a test: kept). */
/** Temp directories made outside a test, removed when the process exits. */
const outsideTests = new Set<string>();

export function tempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  try {
    onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
  } catch {
    // Not inside a test (a suite's setup, a module's top level): removed when the test process exits.
    if (outsideTests.size === 0) {
      process.once("exit", () => {
        for (const left of outsideTests) rmSync(left, { recursive: true, force: true });
      });
    }
    outsideTests.add(dir);
  }
  return dir;
}

/** A workspace in a fresh temp directory, deleted as `tempDir`'s are. */
export function tempWorkspace(): string {
  return tempDir("moniro-ws-");
}

/** A ToolContext over fakes that records what the tools publish and request. */
export function testToolContext(options: TestToolContextOptions = {}): TestToolContext {
  const limits = execLimits({ killGraceMs: 300, ...options.limits });
  const abort = new AbortController();
  const published: OutboundEnvelopeInput[] = [];
  const schedulerRequests: { op: SchedulerOp; request: unknown }[] = [];
  const context: TestToolContext = {
    agent: options.agent ?? "ada",
    context: options.context ?? "personal",
    callId: "call-1",
    workspace: options.workspace ?? tempWorkspace(),
    signal: abort.signal,
    deadlineMs: Date.now() + 60_000,
    executorId: "exec-test",
    personal: options.personal ?? new InMemoryPersonalContext(),
    async publishOutbound(envelope) {
      published.push(envelope);
    },
    async checkOutbound(channel) {
      const reason = options.unserved?.[channel];
      return reason === undefined ? { served: true } : { served: false, reason };
    },
    async requestScheduler(op, request) {
      schedulerRequests.push({ op, request });
      if (options.scheduler === undefined) return { ok: true, jobs: [] };
      return options.scheduler(op, request);
    },
    processes: options.processes ?? new ProcessRegistry({ executorId: "exec-test", limits }),
    limits,
    sandbox: options.sandbox ?? detectSandbox(),
    published,
    schedulerRequests,
    abort,
  };
  if (options.network !== undefined) context.network = options.network;
  if (options.team !== undefined) context.team = options.team;
  if (options.replyTo !== undefined) context.replyTo = options.replyTo;
  if (options.inReplyTo !== undefined) context.inReplyTo = options.inReplyTo;
  return context;
}
