import { dlqRecord } from "@moniro/bus";
import { createSubjects, stamp } from "@moniro/envelopes";
import { describe, expect, it } from "vitest";
import { deadLetterView, replayPlan } from "./dead-letter-view.js";

const subjects = createSubjects("moniro");
const encoder = new TextEncoder();

function stored(record: object, seq = 7) {
  return {
    seq,
    time: new Date().toISOString(),
    subject: subjects.dlq("in"),
    data: encoder.encode(JSON.stringify(record)),
  };
}

describe("a DLQ entry's view and replay", () => {
  const envelope = JSON.stringify({ ...stamp(), agent: "alice", source: "http:bob", text: "é".repeat(40_000) });

  it("replays an accepted 80 KB envelope moved to the DLQ whole", () => {
    const record = dlqRecord({
      origin: "in",
      subject: subjects.in("alice"),
      reason: "removed",
      data: encoder.encode(envelope),
    });
    const view = deadLetterView(stored(record), subjects);
    expect(view).toMatchObject({ replayable: true, payload: envelope });
    expect(view).not.toHaveProperty("truncatedFrom");
    expect(replayPlan(view, subjects)).toMatchObject({ ok: true, subject: subjects.in("alice"), payload: envelope });
  });

  it("shows a cut payload as cut and refuses to replay it, saying why", () => {
    const cut = {
      ...dlqRecord({ origin: "in", subject: subjects.in("alice"), reason: "r", data: encoder.encode("{") }),
      truncatedFrom: 2_000_000,
    };
    const view = deadLetterView(stored(cut), subjects);
    expect(view).toMatchObject({ replayable: false, truncatedFrom: 2_000_000 });
    expect(replayPlan(view, subjects)).toEqual({
      ok: false,
      message: `entry 7 keeps only 1 of its payload's 2000000 bytes (cut to fit the DLQ), so it cannot be sent again as it was; its sender must publish it again on ${subjects.in("alice")}`,
      issues: [{ path: "payload", message: "cut from 2000000 bytes" }],
    });
  });
});
