// docker-compose.yml, checked offline. There is no Docker engine on the
// project's machines and `docker compose` (v2) is not installed, so the file is
// validated by docker-compose v1 (`docker-compose config -q`, which needs no
// engine; `bash .ci/tools.sh` installs it from apt and the test fails without
// it) and, independently, parsed here (strict YAML with merge keys,
// `${VAR:-default}` / `${VAR:?error}` interpolated against a given environment) and compared
// with the Dockerfile and the services' own config loaders.
// Not checked here: `docker compose up` (needs an engine and the images).
import { createHash } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { natsAuthorization, natsConfigFiles, passwordVariable } from "@moniro/bus";
import { redisAclRules } from "@moniro/store/redis-acl";
import { describe, expect, it } from "vitest";
import { parseDocument } from "yaml";
import { tempDir } from "../support/temp-dir.js";
import { execForm, parseDockerfile } from "./dockerfile.js";
import {
  entrySourceExists,
  observeRedis,
  ROOT,
  readText,
  redisServerArgs,
  redisUsersOf,
  run,
  SERVICES,
  scriptedWrite,
  serviceCommand,
} from "./manifests.js";
import { configErrorOf, loadConfigOf, unknownEnvNames } from "./service-env.js";

interface ComposeService {
  image?: string;
  build?: string | { context: string };
  command?: string[] | string;
  environment?: Record<string, string | number | boolean | null>;
  healthcheck?: { test: string[] | string; interval?: string };
  depends_on?: Record<string, { condition: string }> | string[];
  ports?: string[];
  volumes?: string[];
}

const TEXT = readText("docker-compose.yml");

/** docker compose's interpolation: `${X:-d}`, `${X-d}`, `${X:?error}`, `${X}`, `$X`, `$$`. */
function interpolate(value: string, env: Record<string, string>): string {
  return value.replace(
    /\$\$|\$\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?[-?])([^}]*))?\}|\$([A-Za-z_][A-Za-z0-9_]*)/g,
    (whole, name?: string, op?: string, fallback?: string, bare?: string) => {
      if (whole === "$$") return "$";
      const variable = (name ?? bare) as string;
      const set = env[variable];
      if (op === ":?") {
        if (!set) throw new Error(`${variable}: ${fallback}`);
        return set;
      }
      if (op === ":-") return set ? set : (fallback ?? "");
      if (op === "-") return set ?? fallback ?? "";
      return set ?? "";
    },
  );
}

function deepInterpolate(value: unknown, env: Record<string, string>): unknown {
  if (typeof value === "string") return interpolate(value, env);
  if (Array.isArray(value)) return value.map((v) => deepInterpolate(v, env));
  if (value && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, deepInterpolate(v, env)]));
  }
  return value;
}

/** NATS's user for each service and that user's password variable (deploy/compose/nats.conf). */
const NATS_PASSWORD_OF = Object.fromEntries(SERVICES.map((service) => [service, passwordVariable(service)])) as Record<
  (typeof SERVICES)[number],
  string
>;

/** The passwords compose requires (.env.example): one per service's NATS user, and Redis's; tests add what they vary. */
const PASSWORDS: Record<string, string> = {
  ...Object.fromEntries(SERVICES.map((service) => [NATS_PASSWORD_OF[service], `pnats-${service}-SENTINEL`])),
  MONIRO_REDIS_PASSWORD: "predis-SENTINEL",
};

/** The file as compose sees it, given the shell environment / .env `env` (plus the passwords). */
function compose(
  extra: Record<string, string> = {},
  base: Record<string, string> = PASSWORDS,
): { services: Record<string, ComposeService>; volumes?: object } {
  const env = { ...base, ...extra };
  const document = parseDocument(TEXT, { merge: true, uniqueKeys: true });
  if (document.errors.length > 0) throw new Error(`docker-compose.yml: ${document.errors.map((e) => e.message)}`);
  return deepInterpolate(document.toJS({ maxAliasCount: 100 }), env) as ReturnType<typeof compose>;
}

function environmentOf(service: ComposeService): Record<string, string> {
  return Object.fromEntries(
    Object.entries(service.environment ?? {}).map(([k, v]) => [k, v === null ? "" : String(v)]),
  );
}

function serviceOf(name: string, env: Record<string, string> = {}): ComposeService {
  const service = compose(env).services[name];
  if (!service) throw new Error(`docker-compose.yml has no service ${name}`);
  return service;
}

function dockerCompose(): string {
  const found = run("sh", ["-c", "command -v docker-compose || true"]).trim();
  if (!found) {
    throw new Error(
      "docker-compose is not installed: run 'bash .ci/tools.sh' (installs docker-compose v1 from apt; it validates docker-compose.yml without a Docker engine)",
    );
  }
  return found;
}

/** The NATS config file compose mounts for `-c`. */
function natsConfigOf(nats: ComposeService): string {
  const command = nats.command as string[];
  expect(command.slice(0, 1)).toEqual(["-c"]);
  const mount = nats.volumes?.find((v) => v.split(":")[1] === command[1]);
  if (!mount) throw new Error(`nats: ${command[1]} is not mounted`);
  return readText((mount.split(":")[0] as string).replace(/^\.\//, ""));
}

describe("docker-compose.yml", () => {
  it("is accepted by docker-compose config (v1, offline) with the passwords set, and refused without each, naming it", () => {
    const binary = dockerCompose();
    const dir = tempDir("moniro-compose-");
    const empty = join(dir, "empty.env");
    writeFileSync(empty, "");
    expect(() => run(binary, ["--env-file", empty, "-f", join(ROOT, "docker-compose.yml"), "config", "-q"])).toThrow(
      /set MONIRO_(NATS_PASSWORD_[A-Z_]+|REDIS_PASSWORD) in \.env \(see \.env\.example\)/,
    );
    // Each one is required on its own (compose's own `${VAR:?…}`, interpolated here as compose does).
    for (const missing of Object.keys(PASSWORDS)) {
      const without = Object.fromEntries(Object.entries(PASSWORDS).filter(([k]) => k !== missing));
      expect(() => compose({}, without), missing).toThrow(`${missing}: set ${missing} in .env (see .env.example)`);
    }
    const envFile = join(dir, "passwords.env");
    writeFileSync(
      envFile,
      Object.entries(PASSWORDS)
        .map(([k, v]) => `${k}=${v}\n`)
        .join(""),
    );
    run(binary, ["--env-file", envFile, "-f", join(ROOT, "docker-compose.yml"), "config", "-q"]);
    const resolved = run(binary, [
      "--env-file",
      envFile,
      "-f",
      join(ROOT, "docker-compose.yml"),
      "config",
      "--services",
    ]);
    expect(resolved.trim().split("\n").sort()).toEqual(Object.keys(compose().services).sort());
  });

  it(".env.example names every password compose requires, and its one-line generator fills each with a value NATS reads as a string", () => {
    const example = readText(".env.example");
    const required = [...new Set([...TEXT.matchAll(/\$\{([A-Z_]+):\?/g)].map((m) => m[1] as string))];
    expect(required.sort()).toEqual(Object.keys(PASSWORDS).sort());
    const listed = [...example.matchAll(/^([A-Z_]+)=/gm)].map((m) => m[1]);
    for (const name of required) expect(listed, name).toContain(name);
    // The commented generator, run as the user would after `cp .env.example .env`.
    const generator = /^# {3}(.*>> \.env.*)$/m.exec(example)?.[1];
    expect(generator).toBeDefined();
    const dir = tempDir("moniro-env-example-");
    writeFileSync(join(dir, ".env"), example);
    run("sh", ["-c", `cd "${dir}" && ${generator}`]);
    // As compose reads .env: the last assignment of a name wins.
    const values = Object.fromEntries(
      [...readFileSync(join(dir, ".env"), "utf8").matchAll(/^([A-Z_]+)=(.*)$/gm)].map((m) => [m[1], m[2]]),
    );
    for (const name of required) expect(values[name], name).toMatch(/^[A-Za-z][A-Za-z0-9]{15,}$/);
    expect(new Set(required.map((name) => values[name])).size).toBe(required.length);
    const services = compose({}, values as Record<string, string>).services;
    expect(environmentOf(services.gateway as ComposeService).MONIRO_NATS_PASSWORD).toBe(
      values.MONIRO_NATS_PASSWORD_GATEWAY,
    );
  });

  it("runs the five services plus NATS with JetStream, Redis with AOF and Jaeger", () => {
    const { services } = compose();
    expect(Object.keys(services).sort()).toEqual([...SERVICES, "jaeger", "nats", "redis", "signal-cli"].sort());
    const nats = services.nats as ComposeService;
    // JetStream from the config file; its store on a volume, so streams survive a restart.
    const natsConfig = natsConfigOf(nats);
    const storeDir = /jetstream\s*\{\s*store_dir:\s*"([^"]+)"/.exec(natsConfig)?.[1];
    expect(storeDir).toBeDefined();
    expect(nats.volumes?.some((v) => v.split(":")[1] === storeDir)).toBe(true);
    const redisCommand = (services.redis as ComposeService).command as string[];
    expect(redisCommand.join(" ")).toMatch(/--appendonly yes/);
    expect(environmentOf(services.jaeger as ComposeService).COLLECTOR_OTLP_ENABLED).toBe("true");
  });

  it("runs every service from the one image with a command the image accepts", () => {
    const dockerfile = parseDockerfile(readText("Dockerfile"));
    const runtime = dockerfile.stages.at(-1);
    if (!runtime) throw new Error("Dockerfile has no stage");
    // The compose command replaces CMD and picks the service; the ENTRYPOINT (tini) stays in front.
    expect(execForm(runtime, "ENTRYPOINT")).toEqual(["/usr/bin/tini", "--"]);
    const images = new Set<string>();
    for (const name of SERVICES) {
      const service = serviceOf(name);
      expect(service.command, name).toEqual(serviceCommand(name));
      expect(entrySourceExists(service.command as string[]), name).toBe(true);
      const context = typeof service.build === "string" ? service.build : service.build?.context;
      expect(context, name).toBe(".");
      images.add(service.image as string);
    }
    expect(images.size).toBe(1);
  });

  it("has a healthcheck on every service: /readyz on each Moniro service's MONIRO_HTTP_PORT", () => {
    const { services } = compose();
    for (const name of ["nats", "redis"]) expect(services[name]?.healthcheck, name).toBeDefined();
    const ports = new Set<string>();
    for (const name of SERVICES) {
      const service = services[name] as ComposeService;
      const port = environmentOf(service).MONIRO_HTTP_PORT as string;
      expect(port, name).toMatch(/^\d+$/);
      ports.add(port);
      const test = service.healthcheck?.test;
      expect(Array.isArray(test) ? test.join(" ") : test, name).toContain(`http://127.0.0.1:${port}/readyz`);
      // Started only once NATS and Redis answer.
      expect(service.depends_on, name).toMatchObject({
        nats: { condition: "service_healthy" },
        redis: { condition: "service_healthy" },
      });
    }
    expect(ports.size).toBe(SERVICES.length);
  });

  it("points every service at the compose NATS, Redis and Jaeger, with its own service name", () => {
    for (const name of SERVICES) {
      const env = environmentOf(serviceOf(name));
      expect(env.MONIRO_NATS_URL, name).toBe("nats://nats:4222");
      expect(env.MONIRO_REDIS_URL, name).toBe("redis://redis:6379");
      expect(env.OTEL_EXPORTER_OTLP_ENDPOINT, name).toBe("http://jaeger:4318");
      expect(env.OTEL_SERVICE_NAME, name).toBe(name);
      expect(env.MONIRO_HTTP_HOST, name).toBe("0.0.0.0");
    }
  });

  it("sets only environment variable names the services' code reads", () => {
    for (const name of SERVICES) {
      const names = Object.keys(environmentOf(serviceOf(name)));
      expect({ service: name, unknown: unknownEnvNames(name, names) }).toEqual({ service: name, unknown: [] });
    }
  });

  it("gives every service an environment its config loader accepts with a .env, and without one only the gateway refuses, asking for keys", async () => {
    for (const name of SERVICES) {
      const env = environmentOf(serviceOf(name, { MONIRO_API_KEYS: "k1,k2", MONIRO_LOG_LEVEL: "debug" }));
      expect({ name, error: await configErrorOf(name, env) }).toEqual({ name, error: undefined });
    }
    for (const name of SERVICES) {
      const error = await configErrorOf(name, environmentOf(serviceOf(name)));
      if (name === "gateway") expect(error).toMatch(/MONIRO_API_KEYS: no API keys/);
      else expect({ name, error }).toEqual({ name, error: undefined });
    }
  });

  it("requires the gateway's keys, as the header says: open access cannot be had in a container", async () => {
    const keyed = await loadConfigOf("gateway", environmentOf(serviceOf("gateway", { MONIRO_API_KEYS: "k1" })));
    expect(keyed.open).toBe(false);
    expect(keyed.MONIRO_API_KEYS).toEqual(["k1"]);
    const open = await configErrorOf(
      "gateway",
      environmentOf(serviceOf("gateway", { MONIRO_API_KEYS: "", MONIRO_GATEWAY_OPEN: "true" })),
    );
    expect(open).toMatch(/MONIRO_API_KEYS: no API keys/);
    expect(TEXT).toMatch(/MONIRO_API_KEYS \(gateway bearer keys, comma-separated\): required/);
  });

  it("takes secrets from the environment only, and gives each only to the service that needs it", () => {
    const raw = parseDocument(TEXT, { merge: true }).toJS({ maxAliasCount: 100 }) as {
      services: Record<string, ComposeService>;
    };
    for (const name of SERVICES) {
      for (const [key, value] of Object.entries(raw.services[name]?.environment ?? {})) {
        if (/(KEY|KEYS|TOKEN|PASSWORD|SECRET)$/.test(key)) expect(String(value), `${name} ${key}`).toMatch(/^\$\{/);
      }
      const env = environmentOf(
        serviceOf(name, { ANTHROPIC_API_KEY: "sk-ant-SENTINEL", MONIRO_API_KEYS: "gw-SENTINEL" }),
      );
      expect("ANTHROPIC_API_KEY" in env, name).toBe(name === "agent-runner");
      expect("MONIRO_API_KEYS" in env, name).toBe(name === "gateway");
      const values = JSON.stringify(env);
      expect(values.includes("sk-ant-SENTINEL"), name).toBe(name === "agent-runner");
      expect(values.includes("gw-SENTINEL"), name).toBe(name === "gateway");
    }
  });

  it("runs NATS with a user per service (the generated least-privilege config), every password from .env, and JetStream", () => {
    const nats = serviceOf("nats");
    const config = natsConfigOf(nats);
    // The file `npm run nats-config` writes: the services' users with their subjects in namespace moniro.
    expect(config).toBe(natsConfigFiles()["deploy/compose/nats.conf"]);
    expect(config).toContain(natsAuthorization("moniro"));
    for (const service of SERVICES) {
      expect(config, service).toContain(`user: "${service}", password: $${NATS_PASSWORD_OF[service]}`);
    }
    expect(config).toMatch(/jetstream\s*\{/);
    // Every variable the config reads is set in the container, from .env; no other secret is.
    const env = environmentOf(nats);
    const referenced = [...config.matchAll(/password: \$([A-Z_]+)/g)].map((m) => m[1]);
    expect(referenced.sort()).toEqual(Object.values(NATS_PASSWORD_OF).sort());
    expect(env).toEqual(Object.fromEntries(referenced.map((name) => [name, PASSWORDS[name as string]])));
    // No password literal in the committed file.
    expect(config).not.toMatch(/password:\s*"/);
  });

  it("runs Redis with the default user off and one ACL user, the services', whose password only its SHA-256 names, with redisAclRules of compose's prefix", async () => {
    const redis = serviceOf("redis");
    const command = redis.command as string[];
    expect(command.slice(0, 2)).toEqual(["sh", "-c"]);
    const script = command.slice(2).join(" ");
    expect(script).not.toContain(PASSWORDS.MONIRO_REDIS_PASSWORD);
    expect(environmentOf(redis).MONIRO_REDIS_PASSWORD).toBe(PASSWORDS.MONIRO_REDIS_PASSWORD);
    // What redis-server is given, as the container's shell makes it.
    const args = redisServerArgs(script, environmentOf(redis));
    expect(args.join(" ")).toMatch(/--appendonly yes/);
    const prefix = environmentOf(serviceOf("gateway")).MONIRO_REDIS_PREFIX as string;
    expect(prefix).toBe("moniro:");
    const hash = createHash("sha256")
      .update(PASSWORDS.MONIRO_REDIS_PASSWORD as string)
      .digest("hex");
    expect(redisUsersOf(args)).toEqual({
      // Off; with the rules Redis checks a MULTI/EXEC replayed from the AOF against (redis/redis#14541).
      default: ["off", "~*", "&*", "+@all"],
      moniro: ["on", `#${hash}`, ...redisAclRules(prefix)],
    });
    expect(args.join(" ")).not.toContain(PASSWORDS.MONIRO_REDIS_PASSWORD);
    // Every service that uses Redis logs in as that user, with that prefix.
    for (const name of SERVICES.filter((s) => s !== "signal-bridge")) {
      const env = environmentOf(serviceOf(name));
      expect({ name, user: env.MONIRO_REDIS_USERNAME, prefix: env.MONIRO_REDIS_PREFIX }).toEqual({
        name,
        user: "moniro",
        prefix,
      });
    }
    // The healthcheck logs in too (a NOAUTH reply is not healthy).
    const healthcheck = [redis.healthcheck?.test].flat().join(" ");
    expect(healthcheck).toMatch(/redis-cli --user moniro ping \| grep -q PONG/);
    // A redis-server given those arguments: healthy; nobody gets in without the password, nor as
    // `default`; the services' user may not wipe it, change it, list every key or touch a key
    // outside the prefix; what it writes with a script (a MULTI/EXEC in the AOF) survives a restart.
    const seen = await observeRedis(
      args,
      "moniro",
      PASSWORDS.MONIRO_REDIS_PASSWORD as string,
      healthcheck.replace(/^CMD-SHELL /, ""),
      [
        ["FLUSHALL"],
        ["CONFIG", "GET", "*"],
        ["KEYS", "*"],
        ["SET", "other:key", "1"],
        ["SET", `${prefix}agent:a`, "1"],
        ["CLIENT", "ID"],
        ["AUTH", "default", ""],
        scriptedWrite(prefix).write,
      ],
      [scriptedWrite(prefix).readBack],
    );
    expect(seen.probeExit).toBe(0);
    expect(seen.anonymous).toMatch(/^NOAUTH/);
    const [flushall, config, keys, foreign, own, clientId, asDefault, scripted] = seen.replies;
    for (const refused of [flushall, config, keys]) expect(refused).toMatch(/^NOPERM .*permissions to run/);
    expect(foreign).toMatch(/^NOPERM .*keys/);
    expect(own).toBe("OK");
    expect(clientId).toMatch(/^\d+$/);
    expect(asDefault).toMatch(/^WRONGPASS/);
    expect(scripted).toBe("1");
    expect(seen.restarted).toEqual(["kept\n1\n1"]);
  });

  it("logs every service in to NATS as its own user with its own password, and gives the Redis login to each service that uses Redis", async () => {
    for (const name of SERVICES) {
      const env = environmentOf(serviceOf(name, { MONIRO_API_KEYS: "k1" }));
      expect({ name, user: env.MONIRO_NATS_USER, password: env.MONIRO_NATS_PASSWORD }).toEqual({
        name,
        user: name,
        password: PASSWORDS[NATS_PASSWORD_OF[name]],
      });
      // No other service's NATS password, under any name.
      for (const other of SERVICES.filter((s) => s !== name)) {
        expect(JSON.stringify(env), `${name} has ${other}'s`).not.toContain(PASSWORDS[NATS_PASSWORD_OF[other]]);
      }
      expect(
        Object.keys(env).filter((k) => k.startsWith("MONIRO_NATS_PASSWORD_")),
        name,
      ).toEqual([]);
      const redis = name !== "signal-bridge";
      expect({ name, redis: env.MONIRO_REDIS_PASSWORD }).toEqual({
        name,
        redis: redis ? PASSWORDS.MONIRO_REDIS_PASSWORD : undefined,
      });
      if (redis) expect(env.MONIRO_REDIS_USERNAME, name).toBe("moniro");
      // The service's own config loader reads them as its credentials.
      const config = (await loadConfigOf(name, env)) as Record<string, unknown>;
      expect({ name, user: config.MONIRO_NATS_USER, password: config.MONIRO_NATS_PASSWORD }).toEqual({
        name,
        user: name,
        password: PASSWORDS[NATS_PASSWORD_OF[name]],
      });
    }
  });

  it("runs the services read-only, without capabilities; the tool-executor gets what bubblewrap needs and no opt-out", () => {
    for (const name of SERVICES) {
      const service = serviceOf(name) as ComposeService & {
        read_only?: boolean;
        cap_drop?: string[];
        security_opt?: string[];
        cap_add?: string[];
        privileged?: boolean;
      };
      expect(service.read_only, name).toBe(true);
      expect(service.cap_drop, name).toEqual(["ALL"]);
      expect(service.cap_add, name).toBeUndefined();
      expect(service.privileged, name).toBeUndefined();
      expect(service.security_opt, name).toContain("no-new-privileges:true");
      const sandboxOptions = ["seccomp=unconfined", "apparmor=unconfined", "systempaths=unconfined"];
      for (const option of sandboxOptions) {
        expect(service.security_opt?.includes(option), `${name} ${option}`).toBe(name === "tool-executor");
      }
      expect(environmentOf(service), name).not.toHaveProperty("MONIRO_EXEC_UNSAFE_NO_SANDBOX");
    }
    expect(TEXT).not.toContain("MONIRO_EXEC_UNSAFE_NO_SANDBOX");
  });

  it("publishes ports on 127.0.0.1 only", () => {
    for (const [name, service] of Object.entries(compose().services)) {
      for (const port of service.ports ?? []) expect(port, name).toMatch(/^127\.0\.0\.1:/);
    }
  });

  it("mounts the agents directory everywhere and the workspaces volume on tool-executor", () => {
    for (const name of SERVICES) {
      const service = serviceOf(name);
      const env = environmentOf(service);
      const targets = (service.volumes ?? []).map((v) => v.split(":")[1]);
      expect(targets, name).toContain(env.MONIRO_AGENTS_DIR);
      if (name === "tool-executor") {
        const workspaces = (service.volumes ?? []).find((v) => v.split(":")[1] === env.MONIRO_WORKSPACES_DIR);
        // A named volume (declared at the top level), not an anonymous one lost on `down`.
        expect(Object.keys(compose().volumes ?? {})).toContain(workspaces?.split(":")[0]);
      }
    }
  });

  it("mounts ./.workflows read-only into the gateway only, at the MONIRO_WORKFLOWS_DIR it loads", async () => {
    for (const name of SERVICES) {
      const service = serviceOf(name, { MONIRO_API_KEYS: "k1" });
      const mounts = (service.volumes ?? []).filter((v) => v.startsWith("./.workflows:"));
      const env = environmentOf(service);
      if (name !== "gateway") {
        expect({ name, mounts, dir: env.MONIRO_WORKFLOWS_DIR }).toEqual({ name, mounts: [], dir: undefined });
        continue;
      }
      expect(mounts).toEqual([`./.workflows:${env.MONIRO_WORKFLOWS_DIR}:ro`]);
      expect((await loadConfigOf("gateway", env)).MONIRO_WORKFLOWS_DIR).toBe(env.MONIRO_WORKFLOWS_DIR);
    }
  });
});
