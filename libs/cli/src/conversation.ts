import { createClient } from "@moniro/client";
import { EventPrinter, type Output } from "./event-printer.js";

export interface AskOptions {
  gateway: string;
  agent: string;
  text: string;
  from: string;
  /** The gateway's bearer key, if it needs one. */
  apiKey?: string;
  timeoutMs: number;
  out: Output;
  /** After `message-sent`, how long to wait for the delivered `message` before calling it done. */
  deliveryGraceMs?: number;
}

export type AskOutcome = { ok: true; reason: string } | { ok: false; reason: string };

/**
 * Subscribes to the agent's events, then sends it one message through the
 * gateway and prints what happens. Succeeds once its answer arrived (the
 * `message` event of its outbound envelope, or `message-sent` when no delivery
 * is seen) and its cycle ended, or a short grace after the answer; fails when
 * a cycle of its ends without a message, the stream ends, or the timeout passes.
 */
export async function askAgent(options: AskOptions): Promise<AskOutcome> {
  const { gateway, agent, out } = options;
  const client = createClient({ baseUrl: gateway, env: {}, ...(options.apiKey ? { apiKey: options.apiKey } : {}) });
  const abort = new AbortController();
  const timers: NodeJS.Timeout[] = [];
  const later = (ms: number, action: () => void) => {
    const timer = setTimeout(action, ms);
    timer.unref();
    timers.push(timer);
  };
  try {
    let opened: () => void = () => undefined;
    const subscribed = new Promise<void>((resolve) => {
      opened = resolve;
    });
    // A short blip of the local gateway is survived; a gateway that stays away ends the demo.
    const events = client.events(agent, { signal: abort.signal, maxReconnects: 2, onOpen: () => opened() });
    const printer = new EventPrinter(out);
    const finished = new Promise<AskOutcome>((resolve) => {
      later(options.timeoutMs, () =>
        resolve({ ok: false, reason: `no message from ${agent} within ${options.timeoutMs / 1000} s` }),
      );
      let answered = false;
      let sent = false;
      let cycleSeen = false;
      const done = () => resolve({ ok: true, reason: answered ? `${agent} answered` : `${agent} sent her answer` });
      void (async () => {
        try {
          for await (const event of events) {
            const kind = printer.print(event);
            if (kind === "cycle-started") cycleSeen = true;
            // After her answer, keep showing her steps until her cycle ends (or a short grace passes).
            if ((kind === "message" && !answered) || (kind === "message-sent" && !sent && !answered)) {
              later(options.deliveryGraceMs ?? 3_000, done);
            }
            if (kind === "message") answered = true;
            if (kind === "message-sent") sent = true;
            if (kind === "cycle-ended" && (answered || sent)) done();
            // Her turn is over and she said nothing: waiting longer will not help.
            if (kind === "cycle-ended" && cycleSeen && !answered && !sent) {
              resolve({ ok: false, reason: `${agent}'s cycle ended without a message (see her steps above)` });
            }
          }
          resolve({ ok: false, reason: "the gateway closed the event stream" });
        } catch (error) {
          if (!abort.signal.aborted) resolve({ ok: false, reason: `event stream failed: ${(error as Error).message}` });
        }
      })();
    });

    // Subscribed first, so nothing she does after the message is missed.
    const failedEarly = await Promise.race([subscribed.then(() => undefined), finished]);
    if (failedEarly) return failedEarly;
    out.write(`${options.from} → ${agent}: ${options.text}\n`);
    await client.sendMessage({ params: { agent }, body: { text: options.text, from: options.from } });
    return await finished;
  } catch (error) {
    return { ok: false, reason: (error as Error).message };
  } finally {
    for (const timer of timers) clearTimeout(timer);
    abort.abort();
  }
}
