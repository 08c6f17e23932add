import { Worker } from "node:worker_threads";

/**
 * Runs the regular expressions an agent gives `grep` off the executor's event loop, in worker
 * threads, with a time budget. V8's backtracking engine can take minutes on a pattern like
 * `^(a+)+$` against a line of forty `a`s and a `!` (18.8 s for 28 characters on the machine this
 * was written on); on the event loop that would hold every agent's tool calls. When the budget
 * runs out (or the call is aborted) its worker is terminated and the call refused.
 *
 * Agents share a small pool (MAX_WORKERS) and each agent runs on one worker at a time (an agent
 * with its sub-agents counts as one: the caller passes the root agent's name): one agent's slow
 * patterns (several calls at once, or call after call) hold at most one worker, and the others'
 * greps run on the rest (FIFO among agents that are not already running one). The first worker
 * is kept for the process; the others end after IDLE_MS without work.
 */
const WORKER_SOURCE = `
const { parentPort } = require("node:worker_threads");
let cached = { key: "", regex: undefined };
parentPort.on("message", ({ id, pattern, flags, text }) => {
  const key = flags + "/" + pattern;
  if (cached.key !== key) cached = { key, regex: new RegExp(pattern, flags) };
  const lines = text.split("\\n");
  const matching = [];
  for (let index = 0; index < lines.length; index += 1) if (cached.regex.test(lines[index])) matching.push(index);
  parentPort.postMessage({ id, matching });
});
`;

/** Workers at most (each a thread of its own, ~5 MiB). */
export const MAX_WORKERS = 3;
/** How long a worker beyond the first is kept without work. */
const IDLE_MS = 10_000;

/** The pattern ran longer than its budget on one file. */
export class RegexTimeoutError extends Error {
  constructor(readonly budgetMs: number) {
    super(`the regular expression ran longer than ${budgetMs} ms`);
    this.name = "RegexTimeoutError";
  }
}

interface Job {
  agent: string;
  pattern: string;
  flags: string;
  text: string;
  budgetMs: number;
  signal: AbortSignal | undefined;
  resolve: (result: Matching) => void;
  reject: (error: unknown) => void;
}

interface Slot {
  worker: Worker | undefined;
  busy: boolean;
  idle: NodeJS.Timeout | undefined;
}

const slots: Slot[] = [];
const waiting: Job[] = [];
const running = new Set<string>();
let nextId = 0;

function workerOf(slot: Slot): Worker {
  if (slot.worker === undefined) {
    slot.worker = new Worker(WORKER_SOURCE, { eval: true });
    // An idle worker does not keep the process alive.
    slot.worker.unref();
  }
  return slot.worker;
}

/** Ends a worker: its slot starts a new one for its next job. */
function discard(slot: Slot, worker: Worker): void {
  if (slot.worker === worker) slot.worker = undefined;
  void worker.terminate();
}

/** Starts every waiting job that has a free slot and whose agent is not running one already. */
function dispatch(): void {
  for (let index = 0; index < waiting.length; ) {
    const job = waiting[index] as Job;
    if (running.has(job.agent)) {
      index += 1;
      continue;
    }
    let slot = slots.find((candidate) => !candidate.busy);
    if (slot === undefined && slots.length < MAX_WORKERS) {
      slot = { worker: undefined, busy: false, idle: undefined };
      slots.push(slot);
    }
    if (slot === undefined) return;
    waiting.splice(index, 1);
    start(slot, job);
  }
}

function start(slot: Slot, job: Job): void {
  let thread: Worker;
  try {
    thread = workerOf(slot);
  } catch (error) {
    // No thread could be started (out of memory, a thread limit): this call fails, nothing is held.
    job.reject(error);
    return;
  }
  slot.busy = true;
  clearTimeout(slot.idle);
  running.add(job.agent);
  const id = ++nextId;
  const began = performance.now();
  const finish = () => {
    clearTimeout(timer);
    thread.off("message", onMessage);
    thread.off("error", onError);
    job.signal?.removeEventListener("abort", onAbort);
    slot.busy = false;
    running.delete(job.agent);
    if (slot !== slots[0]) slot.idle = setTimeout(() => retire(slot), IDLE_MS).unref();
    dispatch();
  };
  const onMessage = (reply: { id: number; matching: number[] }) => {
    if (reply.id !== id) return;
    finish();
    job.resolve({ lines: reply.matching, ranMs: performance.now() - began });
  };
  const onError = (error: Error) => {
    discard(slot, thread);
    finish();
    job.reject(error);
  };
  const onAbort = () => {
    discard(slot, thread);
    finish();
    job.reject(job.signal?.reason);
  };
  const timer = setTimeout(() => {
    discard(slot, thread);
    finish();
    job.reject(new RegexTimeoutError(job.budgetMs));
  }, job.budgetMs);
  thread.on("message", onMessage);
  thread.on("error", onError);
  job.signal?.addEventListener("abort", onAbort, { once: true });
  thread.postMessage({ id, pattern: job.pattern, flags: job.flags, text: job.text });
}

/** A worker beyond the first, idle for IDLE_MS: ended and its slot freed. */
function retire(slot: Slot): void {
  const index = slots.indexOf(slot);
  if (slot.busy || index <= 0) return;
  slots.splice(index, 1);
  if (slot.worker !== undefined) discard(slot, slot.worker);
}

/** The lines that matched (their indices), and how long the worker ran for them. */
export interface Matching {
  lines: number[];
  ranMs: number;
}

/**
 * The indices of the lines of `text` that `new RegExp(pattern, flags)` matches, within `budgetMs`
 * of running (waiting for a worker does not count), for `agent`. An aborted `signal` ends the
 * call (and its worker, when it runs) and rejects with the signal's reason.
 */
export function matchingLines(
  agent: string,
  pattern: string,
  flags: string,
  text: string,
  budgetMs: number,
  signal?: AbortSignal,
): Promise<Matching> {
  return new Promise<Matching>((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const job: Job = { agent, pattern, flags, text, budgetMs, signal, resolve, reject };
    const leave = () => {
      const index = waiting.indexOf(job);
      if (index < 0) return;
      waiting.splice(index, 1);
      reject(signal?.reason);
    };
    signal?.addEventListener("abort", leave, { once: true });
    job.resolve = (result) => {
      signal?.removeEventListener("abort", leave);
      resolve(result);
    };
    job.reject = (error) => {
      signal?.removeEventListener("abort", leave);
      reject(error);
    };
    waiting.push(job);
    dispatch();
  });
}
