/**
 * Node flags every Moniro service runs with: `moniro up`, the benchmarks'
 * service processes and the container image (the Dockerfile's NODE_OPTIONS,
 * checked by test/deploy) all use this list.
 *
 * `--max-semi-space-size=2` caps V8's young generation at 2 MiB per semi-space
 * (Node 20's default lets it grow to 16 MiB, and it stays grown). The services
 * allocate little per message, so scavenges stay cheap: measured on
 * 2026-11-23 it took the five services' idle RSS from 440 to 389 MiB with no
 * change in the runner's CPU per input or inputs/s beyond run-to-run noise
 * (docs/performance.md at `6887727`).
 *
 * `--v8-pool-size=1` gives V8 one background worker thread instead of Node's
 * default four. The services' heaps are small (tens of MiB), so one helper is
 * enough for concurrent marking and background compilation, and each thread
 * not started saves its stack and malloc arena: the five services' idle RSS
 * went from 389–402 to 378–379 MiB in back-to-back runs on 2026-11-23, with
 * CPU per DM, runner CPU per input and inputs/s unchanged within noise.
 * A deployment on large nodes with large heaps can set its own NODE_OPTIONS.
 */
export const SERVICE_NODE_FLAGS: readonly string[] = ["--max-semi-space-size=2", "--v8-pool-size=1"];

/**
 * The tool-executor and the scheduler: `--interrupt-budget=1081344`, 16 times V8's default
 * (67,584). V8 counts the bytecode a function runs and sends it to TurboFan, its optimising
 * compiler, once that count passes the budget a few times. Neither service is on a DM's path, and
 * their busiest JavaScript is their start-up: reading every agent from the registry (211 in the
 * benchmarks) and, in the executor, stamping the sandbox's /etc copy. That start-up made TurboFan
 * compile 4 (scheduler) and 16 (executor) functions, and a process that ever ran TurboFan keeps
 * about 3.6 MiB more of the node binary resident, with its compiled code and compiler memory: with
 * this budget each settled 4–6 MiB lower (scheduler 63.8 → 57.5, executor 60.2 → 56.0 MiB; `rss-floor`,
 * 2026-11-27) and nothing was compiled at start. Work that goes on still reaches TurboFan, later: a
 * loop run 2,000 times is optimised either way (node-flags.test.ts). Measured in alternated runs on
 * one busy host the same day, both got cheaper, not dearer: the executor's CPU per `exec` call 6.9
 * and 8.7 ms against 8.1 and 10.3, the scheduler's CPU firing 1,000 wakeups at once 430 and 490 ms
 * against 620 and 670 (less compiling for work that does not last). The agent-runner and the
 * gateway keep V8's default: with this budget the `services` bench's steady CPU per DM rose from
 * 8.2–9.1 to 12.1–12.7 ms on the same host.
 */
const START_UP_TIER_UP_BUDGET = "--interrupt-budget=1081344";

/**
 * Flags a service adds on its own command line after SERVICE_NODE_FLAGS: V8 takes the last of
 * a repeated flag and node puts the command line after `NODE_OPTIONS`, so the image keeps one
 * `NODE_OPTIONS` and each deployment's runner command (compose, the chart, `k8s/`, `moniro up`,
 * the test and bench stacks) carries these; test/deploy checks they agree.
 *
 * The tool-executor and the scheduler: START_UP_TIER_UP_BUDGET (above).
 *
 * The agent-runner: `--max-semi-space-size=32`. Its heap holds every active agent's thread and
 * the request pieces built from it (50–70 MiB live after 4,000 DMs in the services bench), and
 * each DM allocates about 0.5 MB. With 2 MiB semi-spaces it scavenged every ~2.5 DMs at
 * 1.0–2.7 ms each (`--trace-gc`: 1,738 scavenges, 3.17 s over the bench's ~4,400 DMs), most of
 * each a fixed cost of scanning its large old generation. Under many agents at once (the
 * `throughput` bench) half of the young generation is still in flight at each scavenge, so each
 * copies megabytes: one runner did 1,702–1,818 inputs/s at 8 MiB, 1,674–2,052 at 16 and
 * 1,971–2,152 at 32 in alternated rounds (2026-11-27), and `services` read a steady CPU per DM
 * of 3.49–4.00 ms at 32 against 4.15–4.92 at 8. Its idle RSS does not change (the young
 * generation grows only under allocation: 314–324 MiB for the five either way); under load the
 * young generation may hold up to 64 MiB (two semi-spaces) where 8 held 16. The other services
 * stay at 2 MiB: the gateway's start-up alone grew its idle RSS from 79 to 112 MiB at 16
 * (docs/performance.md).
 */
export const SERVICE_EXTRA_NODE_FLAGS: Readonly<Record<string, readonly string[]>> = {
  "agent-runner": ["--max-semi-space-size=32"],
  "tool-executor": [START_UP_TIER_UP_BUDGET],
  scheduler: [START_UP_TIER_UP_BUDGET],
};

/** The node flags one service runs with: SERVICE_NODE_FLAGS, then its own (SERVICE_EXTRA_NODE_FLAGS). */
export function serviceNodeFlags(service: string): readonly string[] {
  return [...SERVICE_NODE_FLAGS, ...(SERVICE_EXTRA_NODE_FLAGS[service] ?? [])];
}
