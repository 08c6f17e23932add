/**
 * A runner process for the SIGKILL takeover test (`takeover.int.test.ts`):
 * runs agent `ada` with a model that never answers, and reports on stdout
 * when it is ready and when the model was called. Run from dist/.
 */
import { createSubjects } from "@moniro/envelopes";
import { ScriptedLlm } from "@moniro/ports/test";
import { connectRedis } from "@moniro/store";
import { connect } from "@nats-io/transport-node";
import { staticDirectory } from "../agent-directory.js";
import { startRunner } from "../runner.js";
import { testAgent } from "../test-support.js";

const env = process.env;
const llm = new ScriptedLlm(() => {
  process.stdout.write("llm-called\n");
  return new Promise(() => {});
});
const nc = await connect({ servers: env.MONIRO_NATS_URL ?? "nats://127.0.0.1:4222" });
await startRunner({
  holder: env.MONIRO_RUNNER_ID ?? "doomed",
  subjects: createSubjects(env.MONIRO_NAMESPACE ?? "moniro"),
  nc,
  redis: connectRedis(env.MONIRO_REDIS_URL ?? "redis://127.0.0.1:6379"),
  redisPrefix: env.MONIRO_REDIS_PREFIX ?? "moniro:",
  directory: staticDirectory([testAgent("ada", llm)]),
});
process.stdout.write("ready\n");
