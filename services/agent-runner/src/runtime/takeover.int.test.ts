import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { createSubjects, stamp } from "@moniro/envelopes";
import type { LlmRequest } from "@moniro/ports";
import { ScriptedLlm, textReply } from "@moniro/ports/test";
import { testRedis } from "@moniro/store/test";
import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import { connect } from "@nats-io/transport-node";
import { afterEach, describe, expect, it } from "vitest";
import { staticDirectory } from "./agent-directory.js";
import { DEFAULT_TIMING } from "./agent-runtime.js";
import { type Runner, startRunner } from "./runner.js";
import { eventually, testAgent } from "./test-support.js";

// A runner process is SIGKILLed mid-step; a runner in this process takes the
// agent over with the production timing. The child runs from dist/ (built by
// `npx tsc --build`).
const NATS_URL = process.env.MONIRO_TEST_NATS_URL ?? "nats://127.0.0.1:4222";
const CHILD = fileURLToPath(new URL("../../dist/runtime/test-fixtures/hanging-runner.js", import.meta.url));

function userText(request: LlmRequest | undefined): string {
  return (request?.messages ?? [])
    .flatMap((message) => message.content)
    .map((block) => (block.type === "text" ? block.text : ""))
    .join("\n");
}

describe("takeover after SIGKILL", () => {
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  it("runs the agent of a SIGKILLed runner again on another runner, within lease TTL + sweep period", async () => {
    expect(existsSync(CHILD), `${CHILD} is missing: run npx tsc --build first`).toBe(true);
    const namespace = `t${randomBytes(5).toString("hex")}`;
    const subjects = createSubjects(namespace);
    const t = testRedis();
    const nc = await connect({ servers: NATS_URL });
    cleanups.push(async () => {
      const jsm = await jetstreamManager(nc);
      for (const stream of Object.values(subjects.streams)) await jsm.streams.delete(stream).catch(() => undefined);
      await nc.close();
      await t.cleanup();
    });

    const child: ChildProcess = spawn(process.execPath, [CHILD], {
      env: {
        PATH: process.env.PATH ?? "",
        MONIRO_NATS_URL: NATS_URL,
        MONIRO_REDIS_URL: process.env.MONIRO_TEST_REDIS_URL ?? "redis://127.0.0.1:6379",
        MONIRO_NAMESPACE: namespace,
        MONIRO_REDIS_PREFIX: t.prefix,
        MONIRO_RUNNER_ID: "doomed",
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    const output: string[] = [];
    child.stdout?.on("data", (chunk: Buffer) => output.push(chunk.toString("utf8")));
    child.stderr?.on("data", (chunk: Buffer) => output.push(chunk.toString("utf8")));
    const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
    cleanups.push(async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
      await exited;
    });
    await eventually(() => output.join("").includes("ready"), `the child runner (output: ${output.join("")})`, 20_000);

    await jetstream(nc).publish(
      subjects.in("ada"),
      JSON.stringify({ ...stamp(), agent: "ada", source: "http:alice", text: "do not lose me" }),
    );
    await eventually(() => output.join("").includes("llm-called"), "the child to call its model");

    // The survivor joins only now, so the child certainly owns the agent.
    const llm = new ScriptedLlm(textReply("picked up"));
    const survivorConnection = await connect({ servers: NATS_URL });
    const survivor: Runner = await startRunner({
      holder: "survivor",
      subjects,
      nc: survivorConnection,
      redis: t.connect(),
      redisPrefix: t.prefix,
      directory: staticDirectory([testAgent("ada", llm)]),
    });
    cleanups.push(async () => {
      await survivor.stop();
      await survivorConnection.drain();
    });
    expect(await survivor.runtime.wake("ada")).toBe("held-elsewhere");

    const killedAt = Date.now();
    child.kill("SIGKILL");
    await exited;
    await eventually(() => userText(llm.lastRequest).includes("do not lose me"), "the survivor to run the agent");
    // Both runners use the production timing: the dead runner's lease lapses within its TTL, and the
    // survivor's next sweep takes the agent over. Twice that bound leaves room for a busy machine.
    const promisedMs = DEFAULT_TIMING.leaseTtlMs + DEFAULT_TIMING.sweepEveryMs;
    const tookMs = Date.now() - killedAt;
    expect(tookMs, `takeover took ${tookMs} ms; lease TTL + sweep period is ${promisedMs} ms`).toBeLessThan(
      2 * promisedMs,
    );
    await eventually(() => survivor.runtime.running().length === 0, "the survivor's loop to go idle");
    const state = await survivor.stores.state.get("ada");
    expect(state).toMatchObject({ state: "idle" });
  });
});
