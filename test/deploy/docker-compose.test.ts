// docker-compose.yml, checked offline. There is no Docker engine on the
// project's machines and `docker compose` (v2) is not installed, so the file is
// validated by docker-compose v1 (`docker-compose config -q`, which needs no
// engine; `bash .ci/tools.sh` installs it from apt and the test fails without
// it) and, independently, parsed here (strict YAML with merge keys,
// `${VAR:-default}` interpolated against an empty environment) and compared
// with the Dockerfile and the services' own config loaders.
// Not checked here: `docker compose up` (needs an engine and the images).
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parseDocument } from "yaml";
import { execForm, parseDockerfile } from "./dockerfile.js";
import { entrySourceExists, ROOT, readText, run, SERVICES } from "./manifests.js";
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

/** docker compose's interpolation: `${X:-d}`, `${X-d}`, `${X}`, `$X`, `$$`. */
function interpolate(value: string, env: Record<string, string>): string {
  return value.replace(
    /\$\$|\$\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?-)([^}]*))?\}|\$([A-Za-z_][A-Za-z0-9_]*)/g,
    (whole, name?: string, op?: string, fallback?: string, bare?: string) => {
      if (whole === "$$") return "$";
      const variable = (name ?? bare) as string;
      const set = env[variable];
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

/** The file as compose sees it, given the shell environment / .env `env`. */
function compose(env: Record<string, string> = {}): { services: Record<string, ComposeService>; volumes?: object } {
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

describe("docker-compose.yml", () => {
  it("is accepted by docker-compose config (v1, offline)", () => {
    const binary = dockerCompose();
    const envFile = join(mkdtempSync(join(tmpdir(), "moniro-compose-")), "empty.env");
    writeFileSync(envFile, "");
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

  it("runs the five services plus NATS with JetStream, Redis with AOF and Jaeger", () => {
    const { services } = compose();
    expect(Object.keys(services).sort()).toEqual([...SERVICES, "jaeger", "nats", "redis"].sort());
    const nats = services.nats as ComposeService;
    const natsCommand = nats.command as string[];
    expect(natsCommand).toContain("-js");
    // JetStream data on a volume, so streams survive a restart.
    const storeDir = natsCommand[natsCommand.indexOf("-sd") + 1];
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
      expect(service.command, name).toEqual(["node", `services/${name}/dist/main.js`]);
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
      const env = environmentOf(serviceOf(name));
      expect("ANTHROPIC_API_KEY" in env, name).toBe(name === "agent-runner");
      expect("MONIRO_API_KEYS" in env, name).toBe(name === "gateway");
    }
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
});
