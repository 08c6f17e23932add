import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { NATS_USERS, natsAuthorization, natsConfigFiles, passwordVariable } from "./nats-permissions.js";

const root = resolve(import.meta.dirname, "../../..");

describe("the least-privilege NATS configuration", () => {
  it("is what every deployment ships (npm run nats-config writes the files)", () => {
    for (const [path, text] of Object.entries(natsConfigFiles())) {
      expect(readFileSync(resolve(root, path), "utf8"), `${path}: run 'npm run nats-config'`).toBe(text);
    }
  });

  it("names one user per service, each with its own password variable", () => {
    const config = natsAuthorization("moniro");
    for (const user of NATS_USERS) {
      expect(config).toContain(`user: "${user}", password: $${passwordVariable(user)}`);
    }
    expect(passwordVariable("agent-runner")).toBe("MONIRO_NATS_PASSWORD_AGENT_RUNNER");
  });

  it("the chart's copy has placeholders where the namespace and the stream prefix go, and nothing else of them", () => {
    const chart = natsConfigFiles()["deploy/helm/moniro/files/nats-authorization.conf"] ?? "";
    const filled = chart.replaceAll("HELM_STREAM_PREFIX", "TEAM_A_").replaceAll("HELM_NAMESPACE", "team-a");
    expect(filled).toBe(`${natsAuthorization("team-a")}\n`);
    const moniro = chart.replaceAll("HELM_STREAM_PREFIX", "").replaceAll("HELM_NAMESPACE", "moniro");
    expect(moniro).toBe(`${natsAuthorization("moniro")}\n`);
  });
});
