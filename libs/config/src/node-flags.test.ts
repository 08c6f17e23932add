import { spawnSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { SERVICE_EXTRA_NODE_FLAGS, SERVICE_NODE_FLAGS, serviceNodeFlags } from "./node-flags.js";

/** The young generation's size a node process reaches under allocation, started as the image starts a service. */
function newSpaceMiB(commandLineFlags: readonly string[]): number {
  const script = `const v8 = require("node:v8"); let keep = [];
for (let i = 0; i < 3e6; i++) { keep.push({ i }); if (keep.length > 50000) keep = []; }
process.stdout.write(String(v8.getHeapSpaceStatistics().find((s) => s.space_name === "new_space").space_size / 1048576));`;
  // The image sets SERVICE_NODE_FLAGS as NODE_OPTIONS; compose, the chart and k8s/ put a service's own flags on its command line.
  const result = spawnSync(process.execPath, [...commandLineFlags, "-e", script], {
    env: { PATH: process.env.PATH ?? "", NODE_OPTIONS: SERVICE_NODE_FLAGS.join(" ") },
    encoding: "utf8",
  });
  expect(result.status, result.stderr).toBe(0);
  return Number(result.stdout);
}

/**
 * Whether V8's optimising compiler (TurboFan) compiled a small hot function that ran `calls`
 * times, in a node process started as the image starts a service with these command-line flags.
 */
function optimised(commandLineFlags: readonly string[], calls: number): boolean {
  const script = `function stamp(s) { let h = 0; for (let i = 0; i < s.length; i++) h = (h * 31 + s.charCodeAt(i)) | 0; return h; }
let total = 0; for (let n = 0; n < ${calls}; n++) total += stamp("agent-" + n + ": a definition");
process.stdout.write("total " + total + "\\n");`;
  const result = spawnSync(process.execPath, [...commandLineFlags, "--trace-opt", "-e", script], {
    env: { PATH: process.env.PATH ?? "", NODE_OPTIONS: SERVICE_NODE_FLAGS.join(" ") },
    encoding: "utf8",
  });
  expect(result.status, result.stderr).toBe(0);
  expect(result.stdout).toMatch(/total -?\d+/);
  return /completed optimizing .*<JSFunction stamp /.test(result.stdout);
}

describe("service node flags", () => {
  it("are the shared flags, then the service's own", () => {
    expect(serviceNodeFlags("gateway")).toEqual([...SERVICE_NODE_FLAGS]);
    expect(serviceNodeFlags("signal-bridge")).toEqual([...SERVICE_NODE_FLAGS]);
    expect(serviceNodeFlags("agent-runner")).toEqual([...SERVICE_NODE_FLAGS, "--max-semi-space-size=32"]);
    expect(serviceNodeFlags("tool-executor")).toEqual([...SERVICE_NODE_FLAGS, "--interrupt-budget=1081344"]);
    expect(serviceNodeFlags("scheduler")).toEqual([...SERVICE_NODE_FLAGS, "--interrupt-budget=1081344"]);
  });

  it("keep the executor's and the scheduler's start-up-sized work out of the optimising compiler, not lasting work", () => {
    // 500 calls: what V8 optimises by default, and these two services leave to its baseline tiers.
    expect(optimised([], 500)).toBe(true);
    expect(optimised(SERVICE_EXTRA_NODE_FLAGS["tool-executor"] ?? [], 500)).toBe(false);
    expect(optimised(SERVICE_EXTRA_NODE_FLAGS.scheduler ?? [], 500)).toBe(false);
    // 20,000 calls: work that goes on is optimised all the same.
    expect(optimised(SERVICE_EXTRA_NODE_FLAGS["tool-executor"] ?? [], 20_000)).toBe(true);
    expect(optimised(SERVICE_EXTRA_NODE_FLAGS.scheduler ?? [], 20_000)).toBe(true);
  });

  it("give the runner its larger young generation over the image's NODE_OPTIONS, and the others 2 MiB semi-spaces", () => {
    expect(newSpaceMiB(SERVICE_EXTRA_NODE_FLAGS["agent-runner"] ?? [])).toBe(16);
    expect(newSpaceMiB([])).toBe(4);
  });
});
