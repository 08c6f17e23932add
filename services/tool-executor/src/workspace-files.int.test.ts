import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { decode, dlqRecordSchema } from "@moniro/envelopes";
import { jetstreamManager } from "@nats-io/jetstream";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { type ExecutorFixture, executorFixture } from "./test/executor-fixture.js";

const encoder = new TextEncoder();

// `<ns>.ws.files` (the gateway asks an executor to make, set up and remove an
// instance's shared directory): bad requests get a clear answer, touch nothing,
// and the executor keeps answering.
describe("<ns>.ws.files: bad input", () => {
  let world: ExecutorFixture;

  beforeEach(async () => {
    world = await executorFixture();
    await world.startExecutor();
  });
  afterEach(() => world.cleanup());

  const ask = async (data: string) =>
    (await world.nc.request(world.subjects.wsFiles, encoder.encode(data), { timeout: 10_000 })).json<{
      ok: boolean;
      message?: string;
    }>();

  it("refuses what is not JSON, an unknown op, names that are not subject tokens and unknown fields", async () => {
    expect(await ask("{not json")).toEqual({
      ok: false,
      message: expect.stringMatching(/^payload is not valid JSON \(/),
    });
    expect(await ask(JSON.stringify({ op: "format", workflow: "review", tag: "main" }))).toMatchObject({
      ok: false,
      message: expect.stringMatching(/^invalid workspace files request: /),
    });
    for (const [workflow, tag] of [
      ["..", "main"],
      ["review", "../../etc"],
      ["review/x", "main"],
      ["Review", "main"],
    ]) {
      expect(await ask(JSON.stringify({ op: "remove", workflow, tag }))).toMatchObject({
        ok: false,
        message: expect.stringMatching(/^invalid workspace files request: /),
      });
    }
    expect(
      await ask(JSON.stringify({ op: "setup", workflow: "review", tag: "main", steps: [], path: "/etc" })),
    ).toMatchObject({ ok: false, message: expect.stringMatching(/^invalid workspace files request: /) });
    // Each bad field is named, and each refusal is a DLQ record on <ns>.dlq.tool with the reason.
    expect(await ask(JSON.stringify({ op: "remove", workflow: "review", tag: "-x" }))).toEqual({
      ok: false,
      message: expect.stringMatching(/^invalid workspace files request: tag: /),
    });
    const jsm = await jetstreamManager(world.nc);
    await vi.waitFor(async () => {
      const stored = await jsm.streams.getMessage(world.subjects.streams.dlq, {
        last_by_subj: world.subjects.dlq("tool"),
      });
      const record = decode(dlqRecordSchema, stored?.data ?? new Uint8Array(), "dlq record");
      expect(record.ok && record.value).toMatchObject({
        origin: "tool",
        subject: world.subjects.wsFiles,
        reason: expect.stringMatching(/^invalid workspace files request/),
        issues: [expect.objectContaining({ path: "tag" })],
      });
    });
    expect((await jsm.streams.info(world.subjects.streams.dlq)).state.messages).toBe(8);
    // Nothing was made, and the executor still answers a good request.
    expect(readdirSync(world.workspacesDir)).toEqual([]);
    expect(await ask(JSON.stringify({ op: "setup", workflow: "review", tag: "main", steps: [] }))).toEqual({
      ok: true,
      outputs: {},
    });
    expect(existsSync(join(world.workspacesDir, "review__main"))).toBe(true);
  });
});
