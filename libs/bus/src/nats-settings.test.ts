import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { NatsConfigError, natsConnectionOptions, natsSettingsOf } from "./nats-settings.js";

const dir = mkdtempSync(join(tmpdir(), "moniro-nats-settings-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function options(fields: Record<string, string>) {
  return natsConnectionOptions(natsSettingsOf({ MONIRO_NATS_URL: "nats://127.0.0.1:4222", ...fields }));
}

describe("natsConnectionOptions", () => {
  it("takes the server list apart and moves URL credentials into options", () => {
    expect(options({ MONIRO_NATS_URL: "nats://u:p%20w@n1:4222,nats://n2:4222" })).toEqual({
      servers: ["nats://n1:4222", "nats://n2:4222"],
      user: "u",
      pass: "p w",
    });
    expect(options({ MONIRO_NATS_URL: "nats://tok@n1:4222" })).toEqual({ servers: ["nats://n1:4222"], token: "tok" });
    expect(options({ MONIRO_NATS_USER: "", MONIRO_NATS_TOKEN: "" })).toEqual({ servers: ["nats://127.0.0.1:4222"] });
  });

  it("turns TLS on for tls:// URLs and TLS files, passing the files' paths", () => {
    const ca = join(dir, "ca.pem");
    writeFileSync(ca, "not checked here");
    expect(options({ MONIRO_NATS_URL: "tls://n1:4443" }).tls).toEqual({});
    expect(options({ MONIRO_NATS_TLS_CA_FILE: ca }).tls).toEqual({ caFile: ca });
    expect(options({}).tls).toBeUndefined();
  });

  it("refuses settings that cannot work, naming the variables and how to fix them", () => {
    const cases: Array<[Record<string, string>, string]> = [
      [{ MONIRO_NATS_URL: " , " }, "MONIRO_NATS_URL is empty"],
      [{ MONIRO_NATS_USER: "u", MONIRO_NATS_TOKEN: "t" }, "MONIRO_NATS_USER and MONIRO_NATS_TOKEN are both set"],
      [{ MONIRO_NATS_PASSWORD: "p" }, "MONIRO_NATS_PASSWORD is set without MONIRO_NATS_USER"],
      [{ MONIRO_NATS_TLS_CERT_FILE: "/x.pem" }, "MONIRO_NATS_TLS_CERT_FILE and MONIRO_NATS_TLS_KEY_FILE go together"],
      [
        { MONIRO_NATS_CREDS_FILE: join(dir, "none.creds") },
        `MONIRO_NATS_CREDS_FILE: cannot read '${join(dir, "none.creds")}' (ENOENT)`,
      ],
      [
        { MONIRO_NATS_TLS_KEY_FILE: join(dir, "k"), MONIRO_NATS_TLS_CERT_FILE: join(dir, "c") },
        "MONIRO_NATS_TLS_CERT_FILE: cannot read",
      ],
    ];
    for (const [fields, message] of cases) {
      expect(() => options(fields), message).toThrow(NatsConfigError);
      expect(() => options(fields)).toThrow(message);
    }
    const notASeed = join(dir, "seed.nk");
    writeFileSync(notASeed, "hello");
    expect(() => options({ MONIRO_NATS_NKEY_SEED_FILE: notASeed })).toThrow(
      `MONIRO_NATS_NKEY_SEED_FILE: '${notASeed}' does not hold an nkey seed`,
    );
  });
});
