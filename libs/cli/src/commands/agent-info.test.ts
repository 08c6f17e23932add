import { describe, expect, it } from "vitest";
import { formatAgentInfo } from "./agent-info.js";

describe("moniro agent info", () => {
  it("prints the agent's state and one line per live sub-agent, with the ended ones' token use", () => {
    const text = formatAgentInfo(
      {
        agent: "boss",
        state: "running",
        step: 2,
        restarts: 0,
        error: null,
        leaseHolder: "runner-a",
        inbox: { immediate: 1, normal: 0, background: 0 },
      },
      {
        children: [
          {
            agent: "boss--a1b2c3d4",
            status: "running",
            state: "running",
            step: 1,
            leaseHolder: "runner-b",
            wait: true,
            createdAt: "2026-01-01T00:00:00.000Z",
          },
        ],
        usage: { children: 2, inputTokens: 300, outputTokens: 21 },
      },
    );
    expect(text).toBe(
      [
        "boss: running (step 2)",
        "  runner:   runner-a",
        "  restarts: 0",
        "  inbox:    immediate 1, normal 0, background 0",
        "  sub-agents: 1 live; 2 ended, using 300 input + 21 output tokens",
        "    boss--a1b2c3d4  running, running step 1, awaited, runner runner-b, since 2026-01-01T00:00:00.000Z",
        "",
      ].join("\n"),
    );
  });
});
