import { readFileSync } from "node:fs";
import {
  type Authenticator,
  type ConnectionOptions,
  credsAuthenticator,
  nkeyAuthenticator,
} from "@nats-io/transport-node";

/** Where NATS is and how to log in; each field is one MONIRO_NATS_* setting. */
export interface NatsSettings {
  /** One server or a comma-separated list; `tls://` turns TLS on; `user:pass@` or `token@` log in. */
  url: string;
  user?: string | undefined;
  password?: string | undefined;
  token?: string | undefined;
  nkeySeedFile?: string | undefined;
  credsFile?: string | undefined;
  tlsCaFile?: string | undefined;
  tlsCertFile?: string | undefined;
  tlsKeyFile?: string | undefined;
}

/** The NATS fields of `ServiceConfig` (@moniro/config), accepted as they are. */
export interface NatsConfigFields {
  MONIRO_NATS_URL: string;
  MONIRO_NATS_USER?: string | undefined;
  MONIRO_NATS_PASSWORD?: string | undefined;
  MONIRO_NATS_TOKEN?: string | undefined;
  MONIRO_NATS_NKEY_SEED_FILE?: string | undefined;
  MONIRO_NATS_CREDS_FILE?: string | undefined;
  MONIRO_NATS_TLS_CA_FILE?: string | undefined;
  MONIRO_NATS_TLS_CERT_FILE?: string | undefined;
  MONIRO_NATS_TLS_KEY_FILE?: string | undefined;
}

/** The environment variable behind each setting, for error messages. */
const VARIABLES: Record<Exclude<keyof NatsSettings, "url">, string> & { url: string } = {
  url: "MONIRO_NATS_URL",
  user: "MONIRO_NATS_USER",
  password: "MONIRO_NATS_PASSWORD",
  token: "MONIRO_NATS_TOKEN",
  nkeySeedFile: "MONIRO_NATS_NKEY_SEED_FILE",
  credsFile: "MONIRO_NATS_CREDS_FILE",
  tlsCaFile: "MONIRO_NATS_TLS_CA_FILE",
  tlsCertFile: "MONIRO_NATS_TLS_CERT_FILE",
  tlsKeyFile: "MONIRO_NATS_TLS_KEY_FILE",
};

/** A NATS setting that cannot work (a missing file, two ways to log in): fixing the configuration is the only cure. */
export class NatsConfigError extends Error {
  override readonly name = "NatsConfigError";
}

export function natsSettingsOf(settings: NatsSettings | NatsConfigFields): NatsSettings {
  if ("url" in settings) return settings;
  return {
    url: settings.MONIRO_NATS_URL,
    user: settings.MONIRO_NATS_USER,
    password: settings.MONIRO_NATS_PASSWORD,
    token: settings.MONIRO_NATS_TOKEN,
    nkeySeedFile: settings.MONIRO_NATS_NKEY_SEED_FILE,
    credsFile: settings.MONIRO_NATS_CREDS_FILE,
    tlsCaFile: settings.MONIRO_NATS_TLS_CA_FILE,
    tlsCertFile: settings.MONIRO_NATS_TLS_CERT_FILE,
    tlsKeyFile: settings.MONIRO_NATS_TLS_KEY_FILE,
  };
}

const USERINFO = /^([a-z][a-z0-9+.-]*:\/\/)([^@/]*)@/i;

function splitServers(url: string): string[] {
  return url
    .split(",")
    .map((server) => server.trim())
    .filter((server) => server.length > 0);
}

/** Credentials in a server URL (`nats://user:pass@…`, `nats://token@…`), which nats.js itself ignores. */
function urlCredentials(servers: string[]): { user?: string; password?: string; token?: string } {
  for (const server of servers) {
    const info = USERINFO.exec(server)?.[2];
    if (!info) continue;
    const colon = info.indexOf(":");
    if (colon < 0) return { token: decodeURIComponent(info) };
    return { user: decodeURIComponent(info.slice(0, colon)), password: decodeURIComponent(info.slice(colon + 1)) };
  }
  return {};
}

function readSetting(
  settings: NatsSettings,
  key: "nkeySeedFile" | "credsFile" | "tlsCaFile" | "tlsCertFile" | "tlsKeyFile",
): Buffer {
  const file = settings[key] as string;
  try {
    return readFileSync(file);
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
    throw new NatsConfigError(
      `${VARIABLES[key]}: cannot read '${file}' (${reason}); fix the path or unset ${VARIABLES[key]}`,
      {
        cause: error,
      },
    );
  }
}

/** The file's path once it is known to be readable: nats.js reads TLS files at every (re)connect, so a renewed certificate is picked up. */
function readable(settings: NatsSettings, key: "tlsCaFile" | "tlsCertFile" | "tlsKeyFile"): string {
  readSetting(settings, key);
  return settings[key] as string;
}

/**
 * The nats.js options for `settings`: the server list without credentials in
 * it, one way to log in (user/password, token, nkey seed or creds file) and
 * TLS when a `tls://` URL or a TLS file asks for it. Files are read here, so a
 * missing one is a NatsConfigError naming the variable and the file.
 */
export function natsConnectionOptions(settings: NatsSettings): ConnectionOptions {
  const servers = splitServers(settings.url);
  if (servers.length === 0)
    throw new NatsConfigError(`${VARIABLES.url} is empty; set it to e.g. nats://127.0.0.1:4222`);
  const fromUrl = urlCredentials(servers);
  // An empty variable (`MONIRO_NATS_USER=`) counts as unset.
  const user = settings.user || fromUrl.user;
  const password = settings.password || fromUrl.password;
  const token = settings.token || fromUrl.token;
  const ways = [
    user !== undefined ? VARIABLES.user : undefined,
    token !== undefined ? VARIABLES.token : undefined,
    settings.nkeySeedFile ? VARIABLES.nkeySeedFile : undefined,
    settings.credsFile ? VARIABLES.credsFile : undefined,
  ].filter((way) => way !== undefined);
  if (ways.length > 1) {
    throw new NatsConfigError(`${ways.join(" and ")} are both set; NATS takes one way to log in, so unset all but one`);
  }
  if (password !== undefined && user === undefined) {
    throw new NatsConfigError(`${VARIABLES.password} is set without ${VARIABLES.user}; set the user too`);
  }
  if (Boolean(settings.tlsCertFile) !== Boolean(settings.tlsKeyFile)) {
    throw new NatsConfigError(
      `${VARIABLES.tlsCertFile} and ${VARIABLES.tlsKeyFile} go together (a client certificate and its key); set both or neither`,
    );
  }

  const authenticators: Authenticator[] = [];
  if (settings.nkeySeedFile) {
    const seed = readSetting(settings, "nkeySeedFile").toString("utf8").trim();
    if (!/^S[A-Z2-7]{50,}$/.test(seed)) {
      throw new NatsConfigError(
        `${VARIABLES.nkeySeedFile}: '${settings.nkeySeedFile}' does not hold an nkey seed (one line starting with 'SU'); generate one with 'nk -gen user'`,
      );
    }
    authenticators.push(nkeyAuthenticator(new TextEncoder().encode(seed)));
  }
  if (settings.credsFile) authenticators.push(credsAuthenticator(new Uint8Array(readSetting(settings, "credsFile"))));

  const wantsTls =
    servers.some((server) => server.toLowerCase().startsWith("tls://")) ||
    Boolean(settings.tlsCaFile || settings.tlsCertFile);
  const tls = wantsTls
    ? {
        ...(settings.tlsCaFile ? { caFile: readable(settings, "tlsCaFile") } : {}),
        ...(settings.tlsCertFile ? { certFile: readable(settings, "tlsCertFile") } : {}),
        ...(settings.tlsKeyFile ? { keyFile: readable(settings, "tlsKeyFile") } : {}),
      }
    : undefined;

  return {
    servers: servers.map((server) => server.replace(USERINFO, "$1")),
    ...(user !== undefined ? { user, pass: password ?? "" } : {}),
    ...(token !== undefined ? { token } : {}),
    ...(authenticators.length > 0 ? { authenticator: authenticators } : {}),
    ...(tls ? { tls } : {}),
  };
}

/** Which way of logging in `settings` uses, for the error when the server refuses it. */
export function loginDescription(settings: NatsSettings): string {
  if (settings.nkeySeedFile) return `the nkey seed in ${VARIABLES.nkeySeedFile}`;
  if (settings.credsFile) return `the creds file in ${VARIABLES.credsFile}`;
  if (settings.token) return VARIABLES.token;
  if (settings.user) return `${VARIABLES.user}/${VARIABLES.password}`;
  const fromUrl = urlCredentials(splitServers(settings.url));
  if (fromUrl.user !== undefined) return `the user and password in ${VARIABLES.url}`;
  if (fromUrl.token !== undefined) return `the token in ${VARIABLES.url}`;
  return `no credentials (set ${VARIABLES.user}/${VARIABLES.password}, ${VARIABLES.token}, ${VARIABLES.nkeySeedFile} or ${VARIABLES.credsFile})`;
}
