import { writeFileSync } from "node:fs";
import { Session } from "node:inspector";
import { join } from "node:path";

/**
 * V8's sampling heap profiler over this process, counting every sampled
 * allocation even when the garbage collector has collected it since (what
 * `--heap-prof` leaves out): where the bytes the GC has to process come
 * from. `stop(dir)` writes `alloc-<pid>.heapprofile` (open it in Chrome DevTools).
 *
 * `MONIRO_BENCH_ALLOC_PROF_PROMOTED=1` leaves out what a young-generation collection freed: what
 * is left is what survived one (copied, then promoted to the old generation: the scavenges' own
 * cost, and the major collections' garbage later), and what is still live when it stops.
 */
export async function startAllocationSampling(samplingInterval = 16_384) {
  const session = new Session();
  session.connect();
  const post = (method: string, params?: object) =>
    new Promise<unknown>((resolve, reject) =>
      session.post(method, params ?? {}, (error, result) => (error ? reject(error) : resolve(result))),
    );
  await post("HeapProfiler.enable");
  await post("HeapProfiler.startSampling", {
    samplingInterval,
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: process.env.MONIRO_BENCH_ALLOC_PROF_PROMOTED !== "1",
  });
  return {
    async stop(dir: string): Promise<string> {
      const { profile } = (await post("HeapProfiler.stopSampling")) as { profile: unknown };
      const file = join(dir, `alloc-${process.pid}.heapprofile`);
      writeFileSync(file, JSON.stringify(profile));
      session.disconnect();
      return file;
    },
  };
}
