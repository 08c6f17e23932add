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
 * (docs/performance.md).
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
