import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { createSubjects, stamp } from "@moniro/envelopes";
import { jetstream } from "@nats-io/jetstream";
import { connect } from "@nats-io/transport-node";
import { NATS_URL, sleep } from "./support/bench-runner.js";
import { dmTraffic } from "./support/dm-traffic.js";
import { clockTicksPerSecond, cpuMs, mainThreadCpuMs, syscalls, terminate } from "./support/proc.js";
import { ms, type Row, report } from "./support/report.js";
import { startServiceStack } from "./support/service-stack.js";
import { openSseCounter, type SseCounter } from "./support/sse-counter.js";

const AGENT = "watched";
/** An agent with a client but no DMs: what the DMs of an agent nobody watches cost a gateway with SSE clients. */
const OTHER = "other";
/**
 * DMs (one client on the agent) a fresh gateway handles before the first scenario: V8 keeps
 * compiling the POST and SSE paths for its first ~3,000 DMs (its compiler thread spent ~140 µs per
 * DM over DMs 600–3,600 and ~10 µs after 4,000), so without them the first rows measured the
 * compiler, and the 0-client row (measured first) came out above the 1-client rows.
 */
const PRIMING_DMS = 3_000;
/** Unmeasured DMs before each measurement (the scenario's own path: its clients, its consumer). */
const WARMUP_DMS = 300;
/** DMs measured for each number of clients. */
const DMS = 600;
const SCENARIOS = [
  { clients: 0, on: AGENT },
  { clients: 1, on: OTHER },
  { clients: 1, on: AGENT },
  { clients: 100, on: AGENT },
] as const;
/** Idle CPU of the gateway is read over this long with the clients open (10 ms ticks). */
const IDLE_WINDOW_MS = 3_000;
const GOAL_MS = 1;

/** System (kernel) CPU time of a process so far, in ms: stime of /proc/<pid>/stat. */
function systemMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[12]) * 1000) / clockTicksPerSecond();
}

/** The DM's POST (the gateway's or the floor's), its body read; anything but a 202 stops the run. */
async function postDm(url: string, n: number): Promise<void> {
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ text: `hello ${n}`, from: "bench" }),
  });
  await response.arrayBuffer();
  if (response.status !== 202) throw new Error(`${url} answered ${response.status} to a DM`);
}

/** CPU a process spends per DM over `dms` DMs sent by `send`, net of its idle rate (read before and after, the lower). */
async function cpuPerDm(pid: number, send: (dms: number) => Promise<void>, dms: number) {
  const idleRate = async () => {
    const idle0 = cpuMs(pid);
    const idleT0 = performance.now();
    await sleep(IDLE_WINDOW_MS);
    return (cpuMs(pid) - idle0) / (performance.now() - idleT0);
  };
  const idleBefore = await idleRate();
  const cpu0 = cpuMs(pid);
  const system0 = systemMs(pid);
  const main0 = mainThreadCpuMs(pid);
  const calls0 = syscalls(pid);
  const t0 = performance.now();
  await send(dms);
  const elapsed = performance.now() - t0;
  const gross = cpuMs(pid) - cpu0;
  const system = systemMs(pid) - system0;
  const threads = gross - (mainThreadCpuMs(pid) - main0);
  const calls1 = syscalls(pid);
  const idle = Math.min(idleBefore, await idleRate());
  return {
    perDm: (gross - idle * elapsed) / dms,
    system,
    threads,
    reads: calls1.reads - calls0.reads,
    writes: calls1.writes - calls0.writes,
    elapsed,
  };
}

/**
 * The floor of the SSE path: the same DMs and clients against node:http alone
 * (bench/support/sse-floor-server.ts, its own process), measured as the
 * gateway is; and the gateway's figure as a ratio to it.
 */
async function floorRows(gatewayPerDm: ReadonlyMap<number, number>): Promise<Row[]> {
  const server = spawn(process.execPath, [fileURLToPath(new URL("./support/sse-floor-server.js", import.meta.url))], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  const rows: Row[] = [];
  try {
    const port = await new Promise<number>((resolve, reject) => {
      server.stdout.once("data", (chunk: Buffer) => resolve(Number(chunk.toString("utf8").trim())));
      server.once("exit", (code) => reject(new Error(`the SSE floor server exited (${code})`)));
    });
    const base = `http://127.0.0.1:${port}/v1/agents/${AGENT}`;
    let sent = 0;
    for (const count of [0, 1, 100]) {
      const clients = await Promise.all(
        Array.from({ length: count }, () => openSseCounter(`${base}/events`, "cycle-ended")),
      );
      try {
        const first = sent;
        const send = async (dms: number) => {
          for (let i = 0; i < dms; i++) {
            const n = ++sent;
            await postDm(`${base}/messages`, n);
            await Promise.all(clients.map((client) => client.reached(sent - first)));
          }
        };
        await send(count === 0 ? PRIMING_DMS : WARMUP_DMS);
        const { perDm } = await cpuPerDm(server.pid ?? -1, send, DMS);
        const gateway = gatewayPerDm.get(count);
        rows.push({
          metric: `floor: node:http alone, CPU per DM, ${count} SSE client${count === 1 ? "" : "s"} (gateway / floor)`,
          value: `${ms(perDm)} (${gateway !== undefined ? (gateway / perDm).toFixed(2) : "n/a"}×)`,
        });
      } finally {
        for (const client of clients) client.close();
      }
    }
  } finally {
    await terminate(server);
  }
  return rows;
}

/**
 * Issue 17: the gateway's CPU per DM with 0, 1 and 100 SSE clients on the
 * DM's agent. The gateway runs as its own process (dist/main.js); each DM is
 * a POST to it (202 once JetStream stored the inbound envelope), then the
 * events and the outbound reply a runner publishes for a DM, on NATS; a DM
 * ends when every client has its cycle-ended. CPU is the gateway process's
 * (utime + stime), net of its idle rate.
 */
export async function run(): Promise<void> {
  const stack = await startServiceStack({
    agents: { [AGENT]: `name: ${AGENT}\nmodel: m\n`, [OTHER]: `name: ${OTHER}\nmodel: m\n` },
    env: { MONIRO_LOG_LEVEL: "warn" },
  });
  const rows: Row[] = [];
  const gatewayPerDm = new Map<number, number>();
  const nc = await connect({ servers: NATS_URL });
  try {
    const gateway = await stack.start("gateway");
    const js = jetstream(nc);
    const subjects = createSubjects(stack.namespace);
    const base = `http://127.0.0.1:${gateway.port}`;
    let sent = 0;

    async function dm(): Promise<void> {
      const n = ++sent;
      await postDm(`${base}/v1/agents/${AGENT}/messages`, n);
      const traffic = dmTraffic(`c${n}`, n);
      const publish = ([type, data]: (typeof traffic.events)[number]) =>
        nc.publish(subjects.evt(AGENT, type), JSON.stringify({ ...stamp(), agent: AGENT, type, data }));
      for (const event of traffic.events.slice(0, 5)) publish(event);
      const reply = { ...stamp(), agent: AGENT, to: "http:bench", text: traffic.reply };
      await js.publish(subjects.out("http"), JSON.stringify(reply));
      for (const event of traffic.events.slice(5)) publish(event);
      await nc.flush();
    }

    {
      const primer = await openSseCounter(`${base}/v1/agents/${AGENT}/events`, "cycle-ended");
      try {
        const first = sent;
        const cpu0 = cpuMs(gateway.pid);
        for (let i = 0; i < PRIMING_DMS; i++) {
          await dm();
          await primer.reached(sent - first);
        }
        rows.push({
          metric: `gateway CPU per DM, its first ${PRIMING_DMS} DMs (1 SSE client; V8 still compiling; gross)`,
          value: ms((cpuMs(gateway.pid) - cpu0) / PRIMING_DMS),
        });
      } finally {
        primer.close();
      }
      await sleep(500);
    }

    const none: number[] = [];
    /** The 1-client row's CPU per DM, for the cost of each further client. */
    let oneClient: number | undefined;

    for (const { clients: count, on } of SCENARIOS) {
      const opened: SseCounter[] = await Promise.all(
        Array.from({ length: count }, () => openSseCounter(`${base}/v1/agents/${on}/events`, "cycle-ended")),
      );
      // Clients of the DMs' agent are waited for; a client of another agent must get none of them.
      const clients = on === AGENT ? opened : [];
      try {
        const first = sent;
        /** `dms` DMs, one at a time: the next once every client has this one's cycle-ended. */
        const send = async (dms: number) => {
          for (let i = 0; i < dms; i++) {
            await dm();
            await Promise.all(clients.map((client) => client.reached(sent - first)));
          }
        };
        await send(WARMUP_DMS);
        // Idle read before and after (the lower subtracted: a collection in one window must not flatter).
        const { perDm, system, threads, reads, writes, elapsed } = await cpuPerDm(gateway.pid, send, DMS);
        if (count === 0) none.push(perDm);
        if (count === 1 && on === AGENT) oneClient = perDm;
        if (on === AGENT) gatewayPerDm.set(count, perDm);
        const complete = opened.every((client) => client.count === (on === AGENT ? sent - first : 0));
        const where = on === AGENT ? "on the agent" : "on another agent";
        rows.push({
          metric: `gateway CPU per DM, ${count} SSE client${count === 1 ? "" : "s"} ${where} (POST + SSE)`,
          value: ms(perDm),
          ...(count > 0 && on === AGENT ? { goal: `≤ ${GOAL_MS} ms`, met: perDm <= GOAL_MS } : {}),
        });
        if (count > 0) {
          rows.push(
            { metric: "  of which the SSE path (− the 0-client figure)", value: ms(perDm - (none[0] ?? Number.NaN)) },
            {
              metric:
                on === AGENT
                  ? "  every client got every DM's cycle-ended, once"
                  : "  the other agent's client got none of them",
              value: complete ? "yes" : "NO",
              goal: "yes",
              met: complete,
            },
          );
          if (count > 1 && oneClient !== undefined)
            // What each further client adds: one socket write per DM (the frames are encoded once for all).
            rows.push({
              metric: `  per further client (− the 1-client figure, ÷ ${count - 1})`,
              value: `${(((perDm - oneClient) / (count - 1)) * 1000).toFixed(1)} µs`,
            });
        }
        rows.push(
          // Gross (its idle rate is not split); on loopback a socket write's system time includes the
          // receiving side's TCP work, which the kernel does in the writer's system call.
          { metric: "  of which system (kernel) time, gross", value: ms(system / DMS) },
          // V8's compiler and GC threads, libuv's pool: compiling shows here (a scenario's first DMs re-optimise).
          { metric: "  of which threads other than the main one, gross", value: ms(threads / DMS) },
          {
            metric: "  read / write system calls per DM",
            value: `${(reads / DMS).toFixed(1)} / ${(writes / DMS).toFixed(1)}`,
          },
          { metric: "  wall time per DM", value: ms(elapsed / DMS) },
        );
      } finally {
        for (const client of opened) client.close();
      }
      await sleep(500);
    }
  } finally {
    await nc.close();
    await stack.stop();
  }
  rows.push(...(await floorRows(gatewayPerDm)));
  report({
    benchmark: "sse-fanout",
    title: "Gateway CPU per DM with 0, 1 and 100 SSE clients",
    rows,
    notes: [
      `The gateway is its own process (dist/main.js). A DM is a POST /v1/agents/${AGENT}/messages (202 once stored), then the 7 events and 1 http: reply a runner publishes for a trivial DM, published on NATS by this process; the next DM is sent once every client has the cycle-ended of this one. No runner: the POST's envelope waits on MONIRO_IN.`,
      `CPU: utime+stime of the gateway from /proc/<pid>/stat over ${DMS} DMs after ${WARMUP_DMS} unmeasured ones (and, before the first row, ${PRIMING_DMS} DMs to a fresh gateway with one client, so every row is past V8's compiling; the first row shows what those cost), minus its idle rate read over ${IDLE_WINDOW_MS / 1000} s with the clients open, before and after (the lower of the two). The 0-client row is the POST alone; the difference is the SSE path. With a client on another agent only, the gateway has its outbound consumer up (every http: reply is parsed to find its agent; only an agent with a client gets its replies checked against the schema) but no subscription to the DMs' agent's events: what a wildcard event subscription would add is the decode of those events, the bulk of the 1-client SSE path.`,
      "The SSE clients run in this process (node:http, counting frames); their CPU is not the gateway's.",
      `Floor: the same DMs to a process of node:http alone (bench/support/sse-floor-server.ts), measured the same way after the gateway: it parses the POST's JSON and answers 202, then writes the DM's 7 events and reply, built once, to each client's socket in one write. No NATS, no checks, no telemetry: what any Node server pays for this path on this machine in this run. The gateway/floor ratio reads the 100-client goal against it.`,
      "System time is the gateway's stime over the same DMs, gross: on loopback the kernel does the receiving socket's TCP work inside the writer's system call, so each SSE write costs the gateway the delivery too. The per-further-client row is what one more client adds: its one socket write per DM (Node's stream write and the kernel's). Threads other than the main one: the gateway's CPU minus its main thread's (/proc/<pid>/task/<pid>/stat), gross: V8's background worker (compiling, concurrent GC) and libuv's pool.",
    ],
  });
}
