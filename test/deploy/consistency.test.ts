// The four deploy artefacts side by side: each service listens on the same
// port in the Helm chart, k8s/, docker-compose.yml and the Dockerfile's
// EXPOSE, and that port is the service's own default where the code has one;
// each logs in to NATS as its own user with its own password variable; the
// services' Redis user has redisAclRules of the prefix the services are given.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { passwordVariable } from "@moniro/bus";
import { planService, redisConfig, servicesRedisRules, stackOptions } from "@moniro/cli";
import { redisAclRules } from "@moniro/store/redis-acl";
import { describe, expect, it } from "vitest";
import { parse, parseDocument } from "yaml";
import { parseDockerfile } from "./dockerfile.js";
import {
  byKind,
  containerOf,
  envValue,
  parseManifests,
  ROOT,
  readText,
  redisServerArgs,
  redisUsersOf,
  SERVICES,
} from "./manifests.js";
import { CONFIG_LOADERS } from "./service-env.js";

const chartValues = parse(readText("deploy/helm/moniro/values.yaml")) as {
  services: Record<string, { port: number }>;
};
const compose = parseDocument(readText("docker-compose.yml"), { merge: true }).toJS({ maxAliasCount: 100 }) as {
  services: Record<string, { environment: Record<string, string>; command?: string[] }>;
};

function k8sPort(service: string): number {
  const objects = parseManifests(readText(`k8s/${service}.yaml`), `k8s/${service}.yaml`);
  const deployment = byKind(objects, "Deployment")[0];
  if (!deployment) throw new Error(`k8s/${service}.yaml has no Deployment`);
  return Number(envValue(containerOf(deployment), "MONIRO_HTTP_PORT"));
}

/** The port a service listens on when MONIRO_HTTP_PORT is unset, if its code has a default. */
function defaultPortInCode(service: string): number | undefined {
  const main = readFileSync(join(ROOT, "services", service, "src", "main.ts"), "utf8");
  const inMain = /MONIRO_HTTP_PORT \?\? (\d+)/.exec(main)?.[1];
  if (inMain) return Number(inMain);
  const loader = readFileSync(join(ROOT, CONFIG_LOADERS[service as keyof typeof CONFIG_LOADERS].module), "utf8");
  const inLoader = /MONIRO_HTTP_PORT: config\.MONIRO_HTTP_PORT \?\? (\d+)/.exec(loader)?.[1];
  return inLoader ? Number(inLoader) : undefined;
}

describe("deploy artefacts agree", () => {
  it("each service's src/main.ts parses its environment with the loader the deploy tests run", () => {
    for (const service of SERVICES) {
      const main = readFileSync(join(ROOT, "services", service, "src", "main.ts"), "utf8");
      expect(main, service).toContain(`${CONFIG_LOADERS[service].load}(`);
    }
  });

  it("on each service's port: chart, k8s/, docker-compose.yml, Dockerfile EXPOSE and the code's default", () => {
    const runtime = parseDockerfile(readText("Dockerfile")).stages.at(-1);
    const exposed = (runtime?.instructions ?? [])
      .filter((i) => i.keyword === "EXPOSE")
      .flatMap((i) => i.args.split(/\s+/));
    const ports = new Set<number>();
    for (const service of SERVICES) {
      const port = chartValues.services[service]?.port as number;
      ports.add(port);
      expect({ service, k8s: k8sPort(service) }).toEqual({ service, k8s: port });
      expect({ service, compose: Number(compose.services[service]?.environment.MONIRO_HTTP_PORT) }).toEqual({
        service,
        compose: port,
      });
      expect(exposed, service).toContain(String(port));
      const inCode = defaultPortInCode(service);
      if (inCode !== undefined) expect({ service, default: inCode }).toEqual({ service, default: port });
    }
    expect(ports.size).toBe(SERVICES.length);
  });

  it("on each service's NATS login: its own user and MONIRO_NATS_PASSWORD_<SERVICE> in docker-compose.yml, k8s/ and moniro up", () => {
    const options = stackOptions({}, {}, "/p", "/repo");
    for (const service of SERVICES) {
      const variable = passwordVariable(service);
      const composed = compose.services[service]?.environment ?? {};
      expect({ service, user: composed.MONIRO_NATS_USER, password: composed.MONIRO_NATS_PASSWORD }).toEqual({
        service,
        user: service,
        password: `\${${variable}:?set ${variable} in .env (see .env.example)}`,
      });
      const objects = parseManifests(readText(`k8s/${service}.yaml`), `k8s/${service}.yaml`);
      const container = containerOf(byKind(objects, "Deployment")[0] as (typeof objects)[number]);
      const key = container.env?.find((e: { name: string }) => e.name === "MONIRO_NATS_PASSWORD")?.valueFrom
        ?.secretKeyRef?.key;
      expect({ service, user: envValue(container, "MONIRO_NATS_USER"), key }).toEqual({
        service,
        user: service,
        key: variable,
      });
      // The same .env read into the shell: `moniro up` against compose's NATS.
      const env = planService(service, options, { [variable]: "from-env" }, "node").env;
      expect({ service, user: env.MONIRO_NATS_USER, password: env.MONIRO_NATS_PASSWORD }).toEqual({
        service,
        user: service,
        password: "from-env",
      });
    }
  });

  it("on the services' Redis user: redisAclRules of the key prefix the services are given, in docker-compose.yml, k8s/ and moniro up's own Redis", () => {
    const password = { MONIRO_REDIS_PASSWORD: "p-SENTINEL" };
    // docker-compose.yml (`$$` is compose's escape of `$`).
    const composeScript = (compose.services.redis?.command ?? []).slice(2).join(" ").replaceAll("$$", "$");
    const composeUser = compose.services.gateway?.environment.MONIRO_REDIS_USERNAME as string;
    const composeRules = redisUsersOf(redisServerArgs(composeScript, password))[composeUser]?.slice(2);
    expect(composeRules).toEqual(redisAclRules(compose.services.gateway?.environment.MONIRO_REDIS_PREFIX));
    // k8s/
    const k8sRedis = byKind(parseManifests(readText("k8s/redis.yaml"), "k8s/redis.yaml"), "StatefulSet")[0];
    const k8sScript = (containerOf(k8sRedis as NonNullable<typeof k8sRedis>).command as string[]).slice(2).join(" ");
    const k8sConfig = parseManifests(readText("k8s/config.yaml"), "k8s/config.yaml").find(
      (o) => o.metadata.name === "moniro-config",
    );
    const k8sUser = k8sConfig?.data?.MONIRO_REDIS_USERNAME as string;
    expect(redisUsersOf(redisServerArgs(k8sScript, password))[k8sUser]?.slice(2)).toEqual(
      redisAclRules(k8sConfig?.data?.MONIRO_REDIS_PREFIX),
    );
    // moniro up's own Redis, for the prefix its services get (here from --namespace).
    for (const options of [
      stackOptions({}, {}, "/p", "/repo"),
      stackOptions({ namespace: "dev" }, {}, "/p", "/repo"),
    ]) {
      const prefix = planService("gateway", options, {}, "node").env.MONIRO_REDIS_PREFIX ?? "moniro:";
      const redis = { username: "moniro", password: "pa", services: { username: "services", password: "ps" } };
      const line = redisConfig(6379, "/d", redis, servicesRedisRules(options.redisPrefix))
        .split("\n")
        .find((l) => l.startsWith("user services "));
      const rules = [...(line ?? "").matchAll(/"((?:[^"\\]|\\.)*)"/g)].map((m) =>
        (m[1] as string).replace(/\\(.)/g, "$1"),
      );
      expect({ prefix, rules }).toEqual({ prefix, rules: redisAclRules(prefix) });
    }
  });
});
