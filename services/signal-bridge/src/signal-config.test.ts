import { describe, expect, it } from "vitest";
import { loadSignalBridgeConfig } from "./signal-config.js";

describe("loadSignalBridgeConfig", () => {
  it("treats an unset or empty MONIRO_SIGNAL_URL as Signal disabled", () => {
    expect(loadSignalBridgeConfig({}).MONIRO_SIGNAL_URL).toBeUndefined();
    expect(loadSignalBridgeConfig({ MONIRO_SIGNAL_URL: "" }).MONIRO_SIGNAL_URL).toBeUndefined();
    expect(loadSignalBridgeConfig({ MONIRO_SIGNAL_URL: "http://127.0.0.1:8080" }).MONIRO_SIGNAL_URL).toBe(
      "http://127.0.0.1:8080",
    );
  });

  it("retries an unpublished Signal message for 5 s after SIGTERM unless MONIRO_SHUTDOWN_GRACE_MS says otherwise", () => {
    expect(loadSignalBridgeConfig({}).MONIRO_SHUTDOWN_GRACE_MS).toBe(5_000);
    expect(loadSignalBridgeConfig({ MONIRO_SHUTDOWN_GRACE_MS: "20000" }).MONIRO_SHUTDOWN_GRACE_MS).toBe(20_000);
  });

  it("names the variable and the fix when a value is wrong", () => {
    expect(() => loadSignalBridgeConfig({ MONIRO_SIGNAL_URL: "signal-cli:7583" })).toThrow(
      /MONIRO_SIGNAL_URL: must be the http\(s\) URL of a signal-cli daemon/,
    );
    expect(() => loadSignalBridgeConfig({ MONIRO_SIGNAL_ACCOUNT: "0155" })).toThrow(
      /MONIRO_SIGNAL_ACCOUNT: must be a phone/,
    );
    for (const name of ["MONIRO_SIGNAL_PAIRING", "MONIRO_SIGNAL_READ_RECEIPTS"]) {
      expect(() => loadSignalBridgeConfig({ [name]: "maybe" })).toThrow(
        new RegExp(`${name}: 'maybe' is not true or false`),
      );
    }
    // Any case, as every service reads its flags.
    expect(loadSignalBridgeConfig({ MONIRO_SIGNAL_READ_RECEIPTS: "ON" })).toMatchObject({
      MONIRO_SIGNAL_READ_RECEIPTS: true,
    });
    expect(loadSignalBridgeConfig({ MONIRO_SIGNAL_PAIRING: "False" })).toMatchObject({ MONIRO_SIGNAL_PAIRING: false });
    for (const [name, value] of [
      ["MONIRO_SIGNAL_STALL_MS", "0"],
      ["MONIRO_SIGNAL_SEND_ATTEMPTS", "101"],
      ["MONIRO_SIGNAL_RETRY_BASE_MS", "x"],
      ["MONIRO_SHUTDOWN_GRACE_MS", "-1"],
    ] as const) {
      expect(() => loadSignalBridgeConfig({ [name]: value })).toThrow(new RegExp(`${name}:`));
    }
  });
});
