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

describe("service node flags", () => {
  it("are the shared flags, then the service's own", () => {
    expect(serviceNodeFlags("gateway")).toEqual([...SERVICE_NODE_FLAGS]);
    expect(serviceNodeFlags("agent-runner")).toEqual([...SERVICE_NODE_FLAGS, "--max-semi-space-size=32"]);
  });

  it("give the runner its larger young generation over the image's NODE_OPTIONS, and the others 2 MiB semi-spaces", () => {
    expect(newSpaceMiB(SERVICE_EXTRA_NODE_FLAGS["agent-runner"] ?? [])).toBe(16);
    expect(newSpaceMiB([])).toBe(4);
  });
});
