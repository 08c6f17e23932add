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
 */
export const SERVICE_NODE_FLAGS: readonly string[] = ["--max-semi-space-size=2"];
