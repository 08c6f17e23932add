import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { nkeys } from "@nats-io/transport-node";

type KeyPair = ReturnType<typeof nkeys.createUser>;

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectNats, NatsAuthenticationError } from "./connect.js";
import { NatsConfigError } from "./nats-settings.js";
import { drainNats } from "./shutdown.js";

// The repository's private-server helpers (test/support), loaded by path: it is not a workspace package.
interface PrivateServer {
  url: string;
  port: number;
  dir: string;
  start(): Promise<void>;
  destroy(): Promise<void>;
}
interface Support {
  privateNatsWithConfig(port: number, config: (dir: string) => string): PrivateServer;
  freePort(): Promise<number>;
}
const supportDir = fileURLToPath(new URL("../../../test/support/", import.meta.url));
async function support(): Promise<Support> {
  const servers = await import(join(supportDir, "private-servers.ts"));
  const ports = await import(join(supportDir, "ports.ts"));
  return { ...servers, ...ports } as Support;
}

function recordingLogger() {
  const lines: Array<{ level: string; fields: object; message: string }> = [];
  const at =
    (level: string) =>
    (fields: object, message = "") =>
      lines.push({ level, fields, message });
  return {
    lines,
    text: () => JSON.stringify(lines),
    logger: { debug: at("debug"), info: at("info"), warn: at("warn"), error: at("error") },
  };
}

async function roundTrip(nc: Awaited<ReturnType<typeof connectNats>>): Promise<void> {
  await nc.flush();
  expect(nc.isClosed()).toBe(false);
}

const userSeed = nkeys.createUser();
const userNkey = userSeed.getPublicKey();

describe("connectNats against a nats-server with users, passwords and nkeys", () => {
  let server: PrivateServer;
  beforeAll(async () => {
    const { privateNatsWithConfig, freePort } = await support();
    server = privateNatsWithConfig(
      await freePort(),
      () => `authorization {
  users = [
    { user: "gateway", password: "s3cret-gw" }
    { nkey: "${userNkey}" }
    { user: "narrow", password: "narrow-pw", permissions: { publish: { allow: ["allowed.>"] } } }
  ]
}`,
    );
    writeFileSync(join(server.dir, "user.nk"), `${new TextDecoder().decode(userSeed.getSeed())}\n`);
    await server.start();
  });
  afterAll(() => server?.destroy());

  it("logs in with MONIRO_NATS_USER / MONIRO_NATS_PASSWORD and logs the URL without them", async () => {
    const { logger, text } = recordingLogger();
    const nc = await connectNats(
      { MONIRO_NATS_URL: server.url, MONIRO_NATS_USER: "gateway", MONIRO_NATS_PASSWORD: "s3cret-gw" },
      { name: "auth-test", logger },
    );
    await roundTrip(nc);
    await drainNats(nc);
    expect(text()).not.toContain("s3cret-gw");
  });

  it("logs in with user and password in the URL (nats://user:pass@host), never logging the password", async () => {
    const { logger, lines, text } = recordingLogger();
    const url = server.url.replace("nats://", "nats://gateway:s3cret-gw@");
    const nc = await connectNats({ MONIRO_NATS_URL: url }, { name: "auth-test", logger });
    await roundTrip(nc);
    await drainNats(nc);
    expect(lines[0]).toMatchObject({
      level: "info",
      fields: { nats: server.url.replace("nats://", "nats://gateway:***@") },
    });
    expect(text()).not.toContain("s3cret-gw");
  });

  it("logs in with an nkey seed file", async () => {
    const nc = await connectNats(
      { MONIRO_NATS_URL: server.url, MONIRO_NATS_NKEY_SEED_FILE: join(server.dir, "user.nk") },
      { name: "auth-test" },
    );
    await roundTrip(nc);
    await drainNats(nc);
  });

  it("logs a permission violation, which nats.js reports apart from the publish that caused it", async () => {
    const { logger, lines } = recordingLogger();
    const nc = await connectNats(
      { MONIRO_NATS_URL: server.url, MONIRO_NATS_USER: "narrow", MONIRO_NATS_PASSWORD: "narrow-pw" },
      { name: "auth-test", logger },
    );
    nc.publish("allowed.x", "fine");
    nc.publish("denied.x", "refused");
    await nc.flush();
    const deadline = Date.now() + 5_000;
    while (!lines.some((line) => line.level === "error") && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    await drainNats(nc);
    expect(lines.filter((line) => line.level === "error")).toEqual([
      expect.objectContaining({
        message: "NATS error",
        fields: expect.objectContaining({
          err: expect.stringMatching(/Permissions Violation for Publish to "denied.x"/i),
        }),
      }),
    ]);
  });

  it("a wrong password fails at once with an error that says which credentials were refused", async () => {
    const { logger, lines, text } = recordingLogger();
    const connecting = connectNats(
      { MONIRO_NATS_URL: server.url, MONIRO_NATS_USER: "gateway", MONIRO_NATS_PASSWORD: "wrong-pw" },
      { name: "auth-test", logger },
    );
    await expect(connecting).rejects.toBeInstanceOf(NatsAuthenticationError);
    await expect(connecting).rejects.toThrow(
      `NATS at ${server.url} refused MONIRO_NATS_USER/MONIRO_NATS_PASSWORD (Authorization Violation)`,
    );
    expect(lines).toContainEqual(expect.objectContaining({ level: "error" }));
    expect(text()).not.toContain("wrong-pw");
  });

  it("an nkey the server does not know, and no credentials at all, fail the same way", async () => {
    const stranger = join(server.dir, "stranger.nk");
    writeFileSync(stranger, new TextDecoder().decode(nkeys.createUser().getSeed()));
    await expect(
      connectNats({ MONIRO_NATS_URL: server.url, MONIRO_NATS_NKEY_SEED_FILE: stranger }, { name: "auth-test" }),
    ).rejects.toThrow("refused the nkey seed in MONIRO_NATS_NKEY_SEED_FILE");
    await expect(connectNats({ MONIRO_NATS_URL: server.url }, { name: "auth-test" })).rejects.toThrow(
      "refused no credentials (set MONIRO_NATS_USER/MONIRO_NATS_PASSWORD",
    );
  });

  it("a missing seed file is a NatsConfigError naming the variable and the file, before any connection", async () => {
    const missing = join(server.dir, "nope.nk");
    const connecting = connectNats(
      { MONIRO_NATS_URL: server.url, MONIRO_NATS_NKEY_SEED_FILE: missing },
      { name: "auth-test" },
    );
    await expect(connecting).rejects.toBeInstanceOf(NatsConfigError);
    await expect(connecting).rejects.toThrow(`MONIRO_NATS_NKEY_SEED_FILE: cannot read '${missing}' (ENOENT)`);
  });
});

describe("connectNats against a nats-server with a token", () => {
  let server: PrivateServer;
  beforeAll(async () => {
    const { privateNatsWithConfig, freePort } = await support();
    server = privateNatsWithConfig(await freePort(), () => `authorization { token: "t0ken-value" }`);
    await server.start();
  });
  afterAll(() => server?.destroy());

  it("logs in with MONIRO_NATS_TOKEN, or a token in the URL, and refuses a wrong one", async () => {
    const { logger, text } = recordingLogger();
    for (const settings of [
      { MONIRO_NATS_URL: server.url, MONIRO_NATS_TOKEN: "t0ken-value" },
      { MONIRO_NATS_URL: server.url.replace("nats://", "nats://t0ken-value@") },
    ]) {
      const nc = await connectNats(settings, { name: "auth-test", logger });
      await roundTrip(nc);
      await drainNats(nc);
    }
    expect(text()).not.toContain("t0ken-value");
    await expect(
      connectNats({ MONIRO_NATS_URL: server.url, MONIRO_NATS_TOKEN: "other" }, { name: "auth-test" }),
    ).rejects.toThrow("refused MONIRO_NATS_TOKEN (Authorization Violation)");
  });
});

/** A CA, a server certificate for 127.0.0.1 and a client certificate, all made with openssl in `dir`. */
function makeCertificates(dir: string): void {
  const run = (...args: string[]) => execFileSync("openssl", args, { cwd: dir, stdio: "pipe" });
  run(
    "req",
    "-x509",
    "-newkey",
    "rsa:2048",
    "-nodes",
    "-days",
    "2",
    "-subj",
    "/CN=moniro-test-ca",
    "-keyout",
    "ca-key.pem",
    "-out",
    "ca.pem",
  );
  writeFileSync(join(dir, "san.ext"), "subjectAltName=IP:127.0.0.1,DNS:localhost\n");
  for (const name of ["server", "client"]) {
    run(
      "req",
      "-newkey",
      "rsa:2048",
      "-nodes",
      "-subj",
      `/CN=${name}`,
      "-keyout",
      `${name}-key.pem`,
      "-out",
      `${name}.csr`,
    );
    run(
      "x509",
      "-req",
      "-in",
      `${name}.csr`,
      "-CA",
      "ca.pem",
      "-CAkey",
      "ca-key.pem",
      "-CAcreateserial",
      "-days",
      "2",
      "-extfile",
      "san.ext",
      "-out",
      `${name}.pem`,
    );
  }
}

describe("connectNats over TLS (a self-signed CA, client certificates required)", () => {
  let server: PrivateServer;
  beforeAll(async () => {
    const { privateNatsWithConfig, freePort } = await support();
    server = privateNatsWithConfig(await freePort(), (dir) => {
      makeCertificates(dir);
      return `tls {
  cert_file: ${JSON.stringify(join(dir, "server.pem"))}
  key_file: ${JSON.stringify(join(dir, "server-key.pem"))}
  ca_file: ${JSON.stringify(join(dir, "ca.pem"))}
  verify: true
}
authorization { users = [ { user: "runner", password: "tls-pw" } ] }`;
    });
    await server.start();
  }, 30_000);
  afterAll(() => server?.destroy());

  it("connects with a tls:// URL, the CA, a client certificate and a password", async () => {
    const nc = await connectNats(
      {
        MONIRO_NATS_URL: `tls://127.0.0.1:${server.port}`,
        MONIRO_NATS_USER: "runner",
        MONIRO_NATS_PASSWORD: "tls-pw",
        MONIRO_NATS_TLS_CA_FILE: join(server.dir, "ca.pem"),
        MONIRO_NATS_TLS_CERT_FILE: join(server.dir, "client.pem"),
        MONIRO_NATS_TLS_KEY_FILE: join(server.dir, "client-key.pem"),
      },
      { name: "tls-test" },
    );
    await roundTrip(nc);
    expect(nc.info?.tls_required).toBe(true);
    await drainNats(nc);
  });

  it("without a client certificate the server refuses the connection; an unreadable CA file is a config error", async () => {
    const { logger, lines } = recordingLogger();
    const abort = new AbortController();
    const connecting = connectNats(
      {
        MONIRO_NATS_URL: `tls://127.0.0.1:${server.port}`,
        MONIRO_NATS_USER: "runner",
        MONIRO_NATS_PASSWORD: "tls-pw",
        MONIRO_NATS_TLS_CA_FILE: join(server.dir, "ca.pem"),
      },
      { name: "tls-test", logger, signal: abort.signal },
    );
    while (!lines.some((line) => line.level === "warn")) await new Promise((resolve) => setTimeout(resolve, 20));
    abort.abort(new Error("stopped by the test"));
    await expect(connecting).rejects.toThrow("stopped by the test");
    expect(lines[0]?.message).toContain(`NATS unreachable at tls://127.0.0.1:${server.port}`);

    await expect(
      connectNats(
        { MONIRO_NATS_URL: server.url, MONIRO_NATS_TLS_CA_FILE: join(server.dir, "missing-ca.pem") },
        { name: "tls-test" },
      ),
    ).rejects.toThrow(`MONIRO_NATS_TLS_CA_FILE: cannot read '${join(server.dir, "missing-ca.pem")}'`);
  });
});

/** A NATS JWT (`ed25519-nkey`) with `claims`, issued by `issuer` for `subject`. */
function natsJwt(issuer: KeyPair, subject: string, name: string, nats: Record<string, unknown>): string {
  const encode = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url");
  const claims: Record<string, unknown> = {
    iat: Math.floor(Date.now() / 1_000),
    iss: issuer.getPublicKey(),
    name,
    sub: subject,
    nats: { version: 2, ...nats },
  };
  claims.jti = createHash("sha256").update(JSON.stringify(claims)).digest("base64url").slice(0, 43).toUpperCase();
  const unsigned = `${encode({ typ: "JWT", alg: "ed25519-nkey" })}.${encode(claims)}`;
  return `${unsigned}.${Buffer.from(issuer.sign(new TextEncoder().encode(unsigned))).toString("base64url")}`;
}

describe("connectNats with a creds file (operator mode)", () => {
  let server: PrivateServer;
  const operator = nkeys.createOperator();
  const account = nkeys.createAccount();
  // JetStream in operator mode needs a system account.
  const system = nkeys.createAccount();
  const user = nkeys.createUser();
  beforeAll(async () => {
    const { privateNatsWithConfig, freePort } = await support();
    const accountJwt = natsJwt(operator, account.getPublicKey(), "moniro", {
      type: "account",
      limits: { subs: -1, data: -1, payload: -1, imports: -1, exports: -1, wildcards: true, conn: -1, leaf: -1 },
    });
    const systemJwt = natsJwt(operator, system.getPublicKey(), "SYS", { type: "account" });
    server = privateNatsWithConfig(await freePort(), () => {
      return `operator: ${natsJwt(operator, operator.getPublicKey(), "test-operator", { type: "operator" })}
system_account: ${system.getPublicKey()}
resolver: MEMORY
resolver_preload: { ${account.getPublicKey()}: ${accountJwt}, ${system.getPublicKey()}: ${systemJwt} }`;
    });
    const userJwt = natsJwt(account, user.getPublicKey(), "gateway", {
      type: "user",
      pub: {},
      sub: {},
      subs: -1,
      data: -1,
      payload: -1,
    });
    const seed = new TextDecoder().decode(user.getSeed());
    writeFileSync(
      join(server.dir, "gateway.creds"),
      `-----BEGIN NATS USER JWT-----\n${userJwt}\n------END NATS USER JWT------\n\n-----BEGIN USER NKEY SEED-----\n${seed}\n------END USER NKEY SEED------\n`,
    );
    writeFileSync(
      join(server.dir, "stranger.creds"),
      `-----BEGIN NATS USER JWT-----\n${natsJwt(nkeys.createAccount(), user.getPublicKey(), "x", { type: "user" })}\n------END NATS USER JWT------\n\n-----BEGIN USER NKEY SEED-----\n${seed}\n------END USER NKEY SEED------\n`,
    );
    await server.start();
  });
  afterAll(() => server?.destroy());

  it("logs in with MONIRO_NATS_CREDS_FILE, and a user of an unknown account is refused", async () => {
    const nc = await connectNats(
      { MONIRO_NATS_URL: server.url, MONIRO_NATS_CREDS_FILE: join(server.dir, "gateway.creds") },
      { name: "creds-test" },
    );
    await roundTrip(nc);
    await drainNats(nc);
    await expect(
      connectNats(
        { MONIRO_NATS_URL: server.url, MONIRO_NATS_CREDS_FILE: join(server.dir, "stranger.creds") },
        { name: "creds-test" },
      ),
    ).rejects.toThrow("refused the creds file in MONIRO_NATS_CREDS_FILE");
  });
});
