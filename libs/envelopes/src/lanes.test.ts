import { describe, expect, it } from "vitest";
import { stamp } from "./common.js";
import { defaultPriority, inboundEnvelopeSchema } from "./inbound.js";

// Seed 004's lanes: DM and @mention immediate, a direct workspace send normal, non-@ channel traffic and schedules background.
describe("the default lane of an input", () => {
  it.each([
    ["http:carol", "personal", "immediate"],
    ["signal:+15551234567", "personal", "immediate"],
    ["http:carol", "review:main", "normal"],
    ["signal:+15551234567", "review:pr-7", "normal"],
    ["ws:review:main", "review:main", "background"],
    ["cron:wakeup", "personal", "background"],
    ["cron:wakeup", "review:main", "background"],
    ["webhook:github", "personal", "background"],
  ] as const)("%s in %s → %s", (source, context, lane) => {
    expect(defaultPriority(source, context)).toBe(lane);
  });

  it("is what an envelope without a priority gets; a given priority is kept (a mention's immediate)", () => {
    const base = { ...stamp(0), agent: "alice", text: "x" };
    expect(inboundEnvelopeSchema.parse({ ...base, source: "http:carol", context: "review:main" }).priority).toBe(
      "normal",
    );
    expect(
      inboundEnvelopeSchema.parse({ ...base, source: "ws:review:main", context: "review:main", priority: "immediate" })
        .priority,
    ).toBe("immediate");
  });
});
