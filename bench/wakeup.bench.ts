import { createSubjects, decodeOrThrow, inboundEnvelopeSchema, stamp } from "@moniro/envelopes";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { NATS_URL } from "./support/bench-runner.js";
import { cpuMs } from "./support/proc.js";
import { ms, report } from "./support/report.js";
import { startServiceStack } from "./support/service-stack.js";
import { summarize } from "./support/stats.js";

/** Spread wakeups: one every SPREAD_MS, each its own agent and job. */
const SPREAD = 300;
const SPREAD_MS = 25;
/** Wakeups due in the same second (issue 16: all fire within 1 s). */
const BURST = 1_000;
/** Scheduling ahead of the first due time, so every upsert is in before anything is due. */
const LEAD_MS = 4_000;

/**
 * Issue 16, "wakeups fire on time": the scheduler as its own process
 * (services/scheduler/dist/main.js, BullMQ on the machine's Redis). Wakeups
 * are scheduled the way an agent's `cron` tool does it (`<ns>.sched.upsert`
 * with an `at` time); lateness is from the due time to the inbound envelope
 * arriving on `<ns>.in.<agent>` (a plain NATS subscriber, this process's clock,
 * which is the scheduler's too). Two loads: SPREAD wakeups 25 ms apart
 * (p99 lateness, goal ≤ 100 ms), then BURST wakeups due at the same instant
 * (all fired within 1 s).
 */
export async function run(): Promise<void> {
  const stack = await startServiceStack({ agents: {}, env: {} });
  let nc: NatsConnection | undefined;
  try {
    const scheduler = await stack.start("scheduler");
    nc = await connect({ servers: NATS_URL });
    const subjects = createSubjects(stack.namespace);
    const arrivals = new Map<string, number>();
    const subscription = nc.subscribe(subjects.inAll, {
      callback: (error, message) => {
        if (error) return;
        const at = Date.now();
        const envelope = decodeOrThrow(inboundEnvelopeSchema, message.data);
        arrivals.set(`${envelope.agent}/${envelope.source}`, at);
      },
    });
    await nc.flush();
    const connection = nc;

    async function schedule(agent: string, job: string, dueAt: number): Promise<void> {
      const request = {
        ...stamp(),
        op: "upsert",
        agent,
        job,
        schedule: { at: new Date(dueAt).toISOString() },
        reason: "bench wakeup",
      };
      const reply = await connection.request(subjects.sched("upsert"), JSON.stringify(request), { timeout: 10_000 });
      const body = JSON.parse(new TextDecoder().decode(reply.data)) as { ok: boolean; error?: string };
      if (!body.ok) throw new Error(`upsert refused: ${body.error}`);
    }
    async function scheduleAll(wakeups: Array<{ agent: string; job: string; dueAt: number }>): Promise<void> {
      const queue = [...wakeups];
      await Promise.all(
        Array.from({ length: 32 }, async () => {
          for (let next = queue.shift(); next; next = queue.shift()) await schedule(next.agent, next.job, next.dueAt);
        }),
      );
    }
    async function arrived(keys: string[], timeoutMs: number): Promise<void> {
      const deadline = Date.now() + timeoutMs;
      while (keys.some((key) => !arrivals.has(key)) && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    }

    // 1. Spread: lateness of each wakeup.
    const start = Date.now() + LEAD_MS;
    const spread = Array.from({ length: SPREAD }, (_, i) => ({
      agent: `late-${i}`,
      job: "tick",
      dueAt: start + i * SPREAD_MS,
    }));
    await scheduleAll(spread);
    await arrived(
      spread.map((w) => `${w.agent}/cron:${w.job}`),
      LEAD_MS + SPREAD * SPREAD_MS + 10_000,
    );
    const lateness = spread.map((w) => (arrivals.get(`${w.agent}/cron:${w.job}`) ?? Number.NaN) - w.dueAt);
    const missing = lateness.filter((value) => Number.isNaN(value)).length;
    const spreadSummary = summarize(lateness.filter((value) => !Number.isNaN(value)));

    // 2. Burst: BURST wakeups due at the same instant.
    const due = Date.now() + LEAD_MS + 2_000;
    const burst = Array.from({ length: BURST }, (_, i) => ({ agent: `burst-${i}`, job: "now", dueAt: due }));
    const scheduling = performance.now();
    await scheduleAll(burst);
    const scheduledIn = performance.now() - scheduling;
    const keys = burst.map((w) => `${w.agent}/cron:${w.job}`);
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, due - Date.now() - 200)));
    const cpuBefore = cpuMs(scheduler.pid);
    await arrived(keys, due - Date.now() + 15_000);
    const burstCpu = cpuMs(scheduler.pid) - cpuBefore;
    const burstLateness = keys.map((key) => (arrivals.get(key) ?? Number.NaN) - due);
    const burstMissing = burstLateness.filter((value) => Number.isNaN(value)).length;
    const fired = burstLateness.filter((value) => !Number.isNaN(value));
    const burstSummary = summarize(fired);
    const lastMs = Math.max(...fired);
    subscription.unsubscribe();

    report({
      benchmark: "wakeup",
      title: "Scheduled wakeups: lateness from the due time to the inbound envelope on NATS",
      rows: [
        { metric: `spread (${SPREAD}, ${SPREAD_MS} ms apart): p50 lateness`, value: ms(spreadSummary.p50) },
        {
          metric: `spread (${SPREAD}, ${SPREAD_MS} ms apart): p99 lateness`,
          value: ms(spreadSummary.p99),
          goal: "≤ 100 ms",
          met: missing === 0 && spreadSummary.p99 <= 100,
        },
        { metric: "spread: not fired within 10 s", value: String(missing), goal: "0", met: missing === 0 },
        { metric: `burst (${BURST} due at once): p50 lateness`, value: ms(burstSummary.p50) },
        { metric: `burst: p99 lateness`, value: ms(burstSummary.p99) },
        {
          metric: `burst: last of ${BURST} fired after`,
          value: ms(lastMs),
          goal: "≤ 1 s",
          met: burstMissing === 0 && lastMs <= 1_000,
        },
        { metric: "burst: not fired within 15 s", value: String(burstMissing), goal: "0", met: burstMissing === 0 },
        { metric: `burst: ${BURST} upserts over NATS took`, value: ms(scheduledIn) },
        { metric: "burst: scheduler CPU while firing them", value: ms(burstCpu) },
      ],
      notes: [
        "scheduled with <ns>.sched.upsert {schedule: {at}} (what the cron tool sends); one scheduler process, MONIRO_SCHEDULER_CONCURRENCY default",
        "lateness = arrival of the envelope on <ns>.in.<agent> (core NATS subscriber) − the `at` time; both clocks are this machine's",
      ],
    });
  } finally {
    await nc?.close();
    await stack.stop();
  }
}
