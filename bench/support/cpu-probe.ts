import { setTimeout as sleep } from "node:timers/promises";

export interface CpuProbe {
  /** CPU ms of one run of the fixed work: the fastest, the median and the slowest of the runs. */
  min: number;
  median: number;
  max: number;
}

/** One run: envelopes built, serialised, parsed and indexed, as the services do per message. */
function fixedWork(): number {
  const index = new Map<string, number>();
  let total = 0;
  for (let i = 0; i < 5_000; i++) {
    const envelope = {
      v: 1,
      id: `01J${i.toString(36).padStart(8, "0")}`,
      ts: "2026-11-27T00:00:00.000Z",
      agent: `agent-${i % 50}`,
      data: { text: `message number ${i} for the probe`, items: [i, i + 1, i + 2] },
    };
    const json = JSON.stringify(envelope);
    const back = JSON.parse(json) as typeof envelope;
    index.set(back.id, json.length);
    total += back.data.items.length + (index.get(back.id) ?? 0);
  }
  return total;
}

/**
 * How fast a core of this machine runs a fixed piece of JavaScript, in CPU time (`process.cpuUsage`)
 * per run, over `runs` runs 100 ms apart. On a VM whose host is busy the guest is charged for time
 * its vCPU was not running, so the same work costs more CPU time: a run's CPU figures read against
 * this probe of the same run (its spread says how steady the machine was). The first runs warm the
 * code up and are not counted.
 */
export async function measureCpuProbe(runs = 15): Promise<CpuProbe> {
  for (let i = 0; i < 5; i++) fixedWork();
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const before = process.cpuUsage();
    fixedWork();
    const used = process.cpuUsage(before);
    times.push((used.user + used.system) / 1000);
    await sleep(100);
  }
  times.sort((a, b) => a - b);
  return {
    min: times[0] ?? Number.NaN,
    median: times[Math.floor(times.length / 2)] ?? Number.NaN,
    max: times.at(-1) ?? Number.NaN,
  };
}
