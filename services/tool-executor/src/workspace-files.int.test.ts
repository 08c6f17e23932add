import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
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
    expect(await ask("{not json")).toEqual({ ok: false, message: "the request is not JSON" });
    expect(await ask(JSON.stringify({ op: "format", workflow: "review", tag: "main" }))).toMatchObject({
      ok: false,
      message: expect.stringMatching(/^invalid request: /),
    });
    for (const [workflow, tag] of [
      ["..", "main"],
      ["review", "../../etc"],
      ["review/x", "main"],
      ["Review", "main"],
    ]) {
      expect(await ask(JSON.stringify({ op: "remove", workflow, tag }))).toMatchObject({
        ok: false,
        message: expect.stringMatching(/^invalid request: /),
      });
    }
    expect(
      await ask(JSON.stringify({ op: "setup", workflow: "review", tag: "main", steps: [], path: "/etc" })),
    ).toMatchObject({ ok: false, message: expect.stringMatching(/^invalid request: /) });
    // Nothing was made, and the executor still answers a good request.
    expect(readdirSync(world.workspacesDir)).toEqual([]);
    expect(await ask(JSON.stringify({ op: "setup", workflow: "review", tag: "main", steps: [] }))).toEqual({
      ok: true,
      outputs: {},
    });
    expect(existsSync(join(world.workspacesDir, "review__main"))).toBe(true);
  });
});
