import type { ChildHandle } from "./child-handle.js";

export interface ReadyWait {
  url: string;
  handle: ChildHandle;
  timeoutMs: number;
  intervalMs?: number;
  fetch?: typeof fetch;
}

/** Polls `url` until it answers 2xx; fails at once when the child exits first, or after the timeout. */
export async function waitUntilReady(wait: ReadyWait): Promise<void> {
  const fetchImpl = wait.fetch ?? fetch;
  const deadline = Date.now() + wait.timeoutMs;
  for (;;) {
    if (!wait.handle.running()) {
      const status = await wait.handle.exited;
      throw new Error(`exited before it was ready (code ${status.code ?? "-"}, signal ${status.signal ?? "-"})`);
    }
    try {
      const response = await fetchImpl(wait.url, { signal: AbortSignal.timeout(2_000) });
      if (response.ok) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`not ready at ${wait.url} within ${wait.timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, wait.intervalMs ?? 200));
  }
}

/** Polls a TCP endpoint until it answers, or fails after the timeout. */
export async function waitUntilAnswers(
  answers: () => Promise<boolean>,
  handle: ChildHandle,
  what: string,
  timeoutMs = 15_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await answers())) {
    if (!handle.running()) throw new Error(`${what} exited before it answered`);
    if (Date.now() > deadline) throw new Error(`${what} did not answer within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
