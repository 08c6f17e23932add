import { randomBytes } from "node:crypto";
import {
  createSubjects,
  type DlqRecord,
  decode,
  dlqRecordSchema,
  type InboundEnvelopeInput,
  type Subjects,
  stamp,
} from "@moniro/envelopes";
import { ScriptedLlm, textReply } from "@moniro/ports/test";
import { postToChannel, RedisWorkspaceStore, type Workspace } from "@moniro/store";
import { type TestRedis, testRedis } from "@moniro/store/test";
import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { staticDirectory } from "./agent-directory.js";
import { type Runner, startRunner } from "./runner.js";
import { eventually, TEST_TOOLS, testAgent } from "./test-support.js";
import { TEAM_TOOL_NAMES } from "./tool-specs.js";

// Workspace context end to end through the runner, over real NATS and Redis. The instance is
// started by writing its state with WorkspaceStore.start (what a workflow start does).
const NATS_URL = process.env.MONIRO_TEST_NATS_URL ?? "nats://127.0.0.1:4222";
const TIMING = { leaseTtlMs: 1_000, leaseRenewMs: 200, sweepEveryMs: 200, shutdownGraceMs: 1_000 };
const CHANNEL_SEND = { name: "channel_send", description: "post", inputSchema: { type: "object" } };

describe("a runner's workspace cycles (real NATS and Redis)", () => {
  let subjects: Subjects;
  let nc: NatsConnection;
  let t: TestRedis;
  let runner: Runner | undefined;
  let review: Workspace;
  let llm: ScriptedLlm;

  beforeEach(async () => {
    subjects = createSubjects(`t${randomBytes(5).toString("hex")}`);
    nc = await connect({ servers: NATS_URL });
    t = testRedis();
    review = new RedisWorkspaceStore(t.redis, { prefix: t.prefix }).instance("review", "main");
    await review.start([
      { name: "ada", agent: "ada", kind: "ref", role: "reviewer", promptAppend: "Review for security first." },
      { name: "bob", agent: "bob", kind: "ref", role: "author" },
    ]);
    llm = new ScriptedLlm(() => textReply("ok"));
    runner = await startRunner({
      holder: "r1",
      subjects,
      nc,
      redis: t.connect(),
      redisPrefix: t.prefix,
      directory: staticDirectory(
        ["ada", "carl"].map((name) =>
          testAgent(name, llm, { tools: [...TEST_TOOLS, CHANNEL_SEND], workspaceTools: [...TEAM_TOOL_NAMES] }),
        ),
      ),
      timing: TIMING,
    });
  });

  afterEach(async () => {
    await runner?.stop();
    const jsm = await jetstreamManager(nc);
    for (const stream of Object.values(subjects.streams)) await jsm.streams.delete(stream).catch(() => undefined);
    await nc.close();
    await t.cleanup();
  });

  const js = () => jetstream(nc);
  const publishEnvelope = async (envelope: object & { agent: string }) => {
    await js().publish(subjects.in(envelope.agent), JSON.stringify(envelope));
  };
  const post = (from: string, text: string) =>
    postToChannel({ publish: publishEnvelope }, { instance: review, workflow: "review", tag: "main" }, { from, text });
  const publish = (fields: Partial<InboundEnvelopeInput> & { text: string; agent: string }) =>
    publishEnvelope({ ...stamp(), source: "http:carol", ...fields });
  const requestsWith = (text: string) =>
    llm.requests.filter((request) => request.messages.some((m) => JSON.stringify(m.content).includes(text)));

  it("a mention wakes ada with the channel since she last looked, her unread mentions, the documents and prompt.append; a post without a mention shows in her next workspace cycle", async () => {
    await review.documents.write("plan.md", "# plan", { by: "bob" });
    await post("bob", "I pushed the fix");
    await post("bob", "@ada check line 42");
    const [first] = await eventually(() => {
      const found = requestsWith("check line 42");
      return found.length > 0 && found;
    }, "ada's cycle for the mention");
    const system = first?.system ?? "";
    expect(system).toContain("Here you are ada (reviewer); the other members are bob (author).");
    expect(system).toMatch(
      /### Channel since you last looked\n- \[\d+-\d+\] bob: I pushed the fix\n- \[\d+-\d+\] bob: @ada check line 42/,
    );
    expect(system).toMatch(/### Unread @mentions of you \(1\)\n- \[\d+-\d+\] bob: @ada check line 42/);
    expect(system).toContain("- plan.md (v1, 6 bytes, by bob)");
    expect(system).toContain("Review for security first.");
    expect(first?.tools.map((tool) => tool.name)).toContain("channel_send");
    // Nobody is woken by a post without a mention…
    const before = llm.requests.length;
    await post("bob", "renamed the config file");
    await eventually(async () => (await review.channel.seen("ada")) !== undefined, "ada's cursor to move");
    expect(llm.requests.length).toBe(before);
    // …and ada reads it when she next works in the workspace (a direct send, lane normal).
    await publish({ agent: "ada", text: "anything new?", context: "review:main" });
    const [next] = await eventually(() => {
      const found = requestsWith("anything new?");
      return found.length > 0 && found;
    }, "ada's next workspace cycle");
    expect(next?.system).toMatch(/### Channel since you last looked\n- \[\d+-\d+\] bob: renamed the config file\n/);
    expect(next?.system).not.toContain("I pushed the fix");
  });

  it("a personal cycle has no workspace sections and no team tools", async () => {
    await publish({ agent: "ada", text: "a DM" });
    const [request] = await eventually(() => {
      const found = requestsWith("a DM");
      return found.length > 0 && found;
    }, "ada's personal cycle");
    expect(request?.system).not.toContain("## Workspace");
    expect(request?.system).not.toContain("Review for security first.");
    expect(request?.tools.map((tool) => tool.name)).not.toContain("channel_send");
  });

  it("dead-letters a workspace input for a non-member or an instance that is not running, with the seed's error", async () => {
    const jsm = await jetstreamManager(nc);
    const records: DlqRecord[] = [];
    const readDlq = async () => {
      const info = await jsm.streams.info(subjects.streams.dlq).catch(() => undefined);
      records.length = 0;
      for (let seq = 1; seq <= (info?.state.last_seq ?? 0); seq++) {
        const message = await jsm.streams.getMessage(subjects.streams.dlq, { seq }).catch(() => null);
        const decoded = message ? decode(dlqRecordSchema, message.data) : undefined;
        if (decoded?.ok) records.push(decoded.value);
      }
      return records;
    };
    await publish({ agent: "carl", text: "join us", context: "review:main" });
    await publish({ agent: "ada", text: "docs?", context: "docs:main" });
    await eventually(async () => (await readDlq()).length === 2, "two DLQ records");
    expect(records.map((record) => record.reason).sort()).toEqual([
      'carl is not a participant in workflow "review".\nAdd carl to .workflows/review.yaml first.',
      'workflow "docs" is not running.\nStart it with: moniro start docs',
    ]);
    expect(llm.requests).toHaveLength(0);
  });
});
