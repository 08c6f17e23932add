import { Worker } from "node:worker_threads";

/**
 * Runs the regular expressions an agent gives `grep` off the executor's event loop, in one worker
 * thread kept for the process, with a time budget. V8's backtracking engine can take minutes on a
 * pattern like `^(a+)+$` against a line of forty `a`s and a `!` (18.8 s for 28 characters on the
 * machine this was written on); on the event loop that would hold every agent's tool calls. When
 * the budget runs out the worker is terminated (a new one starts with the next call) and the call
 * is refused with RegexTimeoutError.
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

/** The pattern ran longer than its budget on one file. */
export class RegexTimeoutError extends Error {
  constructor(readonly budgetMs: number) {
    super(`the regular expression ran longer than ${budgetMs} ms`);
    this.name = "RegexTimeoutError";
  }
}

let worker: Worker | undefined;
let nextId = 0;
/** Calls one at a time: the worker has one thread, and a budget counts only the call's own work. */
let queue: Promise<unknown> = Promise.resolve();

function started(): Worker {
  if (worker === undefined) {
    worker = new Worker(WORKER_SOURCE, { eval: true });
    // An idle worker does not keep the process alive.
    worker.unref();
  }
  return worker;
}

function run(pattern: string, flags: string, text: string, budgetMs: number): Promise<number[]> {
  const thread = started();
  const id = ++nextId;
  return new Promise<number[]>((resolve, reject) => {
    const done = () => {
      clearTimeout(timer);
      thread.off("message", onMessage);
      thread.off("error", onError);
    };
    const onMessage = (reply: { id: number; matching: number[] }) => {
      if (reply.id !== id) return;
      done();
      resolve(reply.matching);
    };
    const onError = (error: Error) => {
      done();
      if (worker === thread) worker = undefined;
      reject(error);
    };
    const timer = setTimeout(() => {
      done();
      if (worker === thread) worker = undefined;
      void thread.terminate();
      reject(new RegexTimeoutError(budgetMs));
    }, budgetMs);
    thread.on("message", onMessage);
    thread.on("error", onError);
    thread.postMessage({ id, pattern, flags, text });
  });
}

/** The indices of the lines of `text` that `new RegExp(pattern, flags)` matches, within `budgetMs`. */
export function matchingLines(pattern: string, flags: string, text: string, budgetMs: number): Promise<number[]> {
  const result = queue.then(() => run(pattern, flags, text, budgetMs));
  queue = result.catch(() => undefined);
  return result;
}
