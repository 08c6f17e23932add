import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { decode, dlqRecordSchema } from "@moniro/envelopes";
import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import { afterEach, describe, expect, it } from "vitest";
import { startTestGateway, type TestGateway } from "./test/gateway-fixture.js";

const encoder = new TextEncoder();

// `<ns>.wf.*` (docs/integration.md): bad requests get an error reply with the
// HTTP status and code, nothing is started, and the gateway keeps answering.
describe("<ns>.wf.*: bad input", () => {
  let g: TestGateway | undefined;
  let dir: string | undefined;
  afterEach(async () => {
    await g?.cleanup();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("refuses what is not JSON, unknown fields, bad names, and an unknown operation", async () => {
    dir = mkdtempSync(join(tmpdir(), "moniro-workflows-"));
    g = await startTestGateway({ MONIRO_WORKFLOWS_DIR: dir });
    await g.gateway.connected;
    const gw = g;
    const ask = async (subject: string, data: string) =>
      (await gw.nc.request(subject, encoder.encode(data), { timeout: 5_000 })).json<{
        ok: boolean;
        error?: { status: number; code: string; message: string };
      }>();

    expect(await ask(gw.subjects.wf("start"), "{not json")).toEqual({
      ok: false,
      error: {
        status: 400,
        code: "invalid_body",
        message: 'the request must be a JSON object, e.g. {"workflow": "review", "tag": "pr-1"}',
      },
    });
    for (const body of [
      { workflow: "../etc", tag: "main" },
      { workflow: "review", tag: "a.b" },
      { workflow: "review", tag: "main", extra: true },
      { tag: "main" },
    ]) {
      expect(await ask(gw.subjects.wf("start"), JSON.stringify(body))).toMatchObject({
        ok: false,
        error: { status: 400, code: "invalid_body" },
      });
    }
    expect(await ask(`${gw.subjects.namespace}.wf.format`, "{}")).toMatchObject({
      ok: false,
      error: { status: 404, code: "not_found", message: expect.stringMatching(/^unknown operation 'format'/) },
    });
    // Still answering, and nothing was started.
    expect(await ask(gw.subjects.wf("list"), "{}")).toEqual({ ok: true, result: { instances: [] } });
    // Each refused request is also a DLQ record on <ns>.dlq.wf, with the reason and the offending fields.
    const jsm = await jetstreamManager(gw.nc);
    const dlq = gw.subjects.dlq("wf");
    const counted = async () =>
      (await jsm.streams.info(gw.subjects.streams.dlq, { subjects_filter: dlq })).state.subjects?.[dlq] ?? 0;
    await expect.poll(counted).toBe(6);
    const records: unknown[] = [];
    const consumer = await jetstream(gw.nc).consumers.get(gw.subjects.streams.dlq, { filter_subjects: dlq });
    for await (const message of await consumer.fetch({ max_messages: 6, expires: 5_000 })) {
      const record = decode(dlqRecordSchema, message.data);
      records.push(record.ok ? record.value : record.error.message);
      if (records.length === 6) break;
    }
    expect(records[0]).toMatchObject({ origin: "wf", subject: gw.subjects.wf("start"), payload: "{not json" });
    expect(records[1]).toMatchObject({ origin: "wf", issues: [{ path: "workflow" }] });
    expect(records[5]).toMatchObject({
      subject: `${gw.subjects.namespace}.wf.format`,
      reason: expect.stringMatching(/^unknown operation 'format'/),
    });
  });
});
