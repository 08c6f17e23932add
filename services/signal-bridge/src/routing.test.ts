import { describe, expect, it } from "vitest";
import { loadRouting, readRoutingFile, resolveRouting } from "./routing.js";
import { loadSignalBridgeConfig } from "./signal-config.js";

const GROUP = "aGVsbG8gd29ybGQgZ3JvdXAgaWQgMzIgYnl0ZXM=";

describe("Signal routing configuration", () => {
  it("merges the environment with the YAML file: mapping, groups, allowlist", () => {
    const config = loadSignalBridgeConfig({
      MONIRO_SIGNAL_URL: "http://127.0.0.1:8080",
      MONIRO_SIGNAL_DEFAULT_AGENT: "alice",
      MONIRO_SIGNAL_ALLOW: "+15550002, +15550003",
    });
    const file = readRoutingFile("signal.yaml", () =>
      [
        "default_agent: ignored-because-env-wins",
        "allow: ['+15550009']",
        "numbers: {'+15550004': bob}",
        `groups: {'${GROUP}': {agent: team}}`,
        "read_receipts: true",
      ].join("\n"),
    );
    const routing = resolveRouting(config, file);
    expect(routing.defaultAgent).toBe("alice");
    expect([...routing.allow].sort()).toEqual(["+15550002", "+15550003", "+15550004", "+15550009"]);
    expect(routing.numbers.get("+15550004")).toBe("bob");
    expect(routing.groups.get(GROUP)).toEqual({ agent: "team", requireMention: true });
    expect(routing.readReceipts).toBe(true);
    expect(routing.pairing).toBe(true);
  });

  it("names the file and the field when the YAML is wrong", () => {
    expect(() => readRoutingFile("/etc/moniro/signal.yaml", () => "numbers: {'0155': bob}\n")).toThrow(
      /invalid Signal configuration in \/etc\/moniro\/signal.yaml:\n {2}numbers[\s\S]*\.0155: the key must be a \+E.164 phone number/,
    );
    expect(() => readRoutingFile("s.yaml", () => "groups: {'abc=': {agent: x, mention: true}}\n")).toThrow(
      /s.yaml:[\s\S]*groups\.abc=/,
    );
    expect(() => readRoutingFile("s.yaml", () => "allow: [\n")).toThrow(/s.yaml: not valid YAML/);
    expect(() =>
      readRoutingFile("missing.yaml", () => {
        throw new Error("ENOENT");
      }),
    ).toThrow(/MONIRO_SIGNAL_CONFIG_FILE: cannot read missing.yaml: ENOENT/);
  });

  it("checks the named file at start even while Signal is off, naming the file and the field", () => {
    const broken = () => "numbers: {'0155': bob}\n";
    const off = loadSignalBridgeConfig({ MONIRO_SIGNAL_CONFIG_FILE: "/etc/moniro/signal.yaml" });
    expect(() => loadRouting(off, broken)).toThrow(
      /invalid Signal configuration in \/etc\/moniro\/signal.yaml:\n {2}numbers[\s\S]*\.0155: the key must be/,
    );
    expect(() =>
      loadRouting(off, () => {
        throw new Error("ENOENT");
      }),
    ).toThrow(/MONIRO_SIGNAL_CONFIG_FILE: cannot read \/etc\/moniro\/signal.yaml: ENOENT/);
    // A valid file with Signal off: checked, no routing (and no default agent needed).
    expect(loadRouting(off, () => "allow: ['+15550009']\n")).toBeUndefined();
    expect(loadRouting(loadSignalBridgeConfig({}), broken)).toBeUndefined();
    const on = loadSignalBridgeConfig({
      MONIRO_SIGNAL_URL: "http://127.0.0.1:8080",
      MONIRO_SIGNAL_CONFIG_FILE: "signal.yaml",
    });
    expect(() => loadRouting(on, broken)).toThrow(/invalid Signal configuration in signal.yaml/);
    expect(loadRouting(on, () => "default_agent: alice\n")?.defaultAgent).toBe("alice");
  });

  it("needs a default agent and valid allowlist entries", () => {
    const base = { MONIRO_SIGNAL_URL: "http://127.0.0.1:8080" };
    expect(() => resolveRouting(loadSignalBridgeConfig(base))).toThrow(/MONIRO_SIGNAL_DEFAULT_AGENT: required/);
    expect(() =>
      resolveRouting(loadSignalBridgeConfig({ ...base, MONIRO_SIGNAL_DEFAULT_AGENT: "a", MONIRO_SIGNAL_ALLOW: "bob" })),
    ).toThrow(/MONIRO_SIGNAL_ALLOW: 'bob' must be a \+E.164 phone number/);
    expect(() => loadSignalBridgeConfig({ MONIRO_SIGNAL_DEFAULT_AGENT: "Not A Name" })).toThrow(
      /MONIRO_SIGNAL_DEFAULT_AGENT: must be 1-63 characters/,
    );
  });
});
