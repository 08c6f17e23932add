// The plain manifests in k8s/, checked offline: each file parsed strictly and
// validated against the Kubernetes OpenAPI schema (kubernetes-models), the
// kustomization rendered with `./tools/kubectl kustomize` (installed by
// `bash .ci/tools.sh`; the tests fail without it), and the result compared
// with what the Helm chart renders by default, so the two ways of deploying
// cannot drift apart. Not checked here: `kubectl apply` (needs an API server).

import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { NATS_USERS, natsConfigFiles, passwordVariable } from "@moniro/bus";
import { parseAgentDefinition } from "@moniro/config";
import { redisAclRules } from "@moniro/store/redis-acl";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { envOf, parseDockerfile } from "./dockerfile.js";
import {
  byKind,
  containerOf,
  danglingReferences,
  deploymentOf,
  effectiveEnv,
  envNamesOf,
  type K8sObject,
  observeRedis,
  parseManifests,
  ROOT,
  readText,
  redisServerArgs,
  redisUsersOf,
  run,
  SERVICES,
  scriptedWrite,
  serviceContainerProblems,
  tool,
  validateObject,
} from "./manifests.js";
import { configErrorOf, SECRET_NAME, unknownEnvNames } from "./service-env.js";
import { expectWorkflowsMountedInGatewayOnly } from "./workflows-mount.js";

const DIR = "k8s";
const files = readdirSync(join(ROOT, DIR)).filter((f) => f.endsWith(".yaml") && f !== "kustomization.yaml");
const kustomization = parse(readText(`${DIR}/kustomization.yaml`)) as {
  resources: string[];
  images?: Array<{ name: string; newName?: string; newTag?: string }>;
  configMapGenerator?: Array<{
    name: string;
    namespace?: string;
    files?: string[];
    options?: { labels?: Record<string, string> };
  }>;
};
/** The ConfigMaps kustomization.yaml generates from files beside it (key: the file's name, value: its text). */
const generated: K8sObject[] = (kustomization.configMapGenerator ?? []).map((generator) => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: {
    name: generator.name,
    ...(generator.namespace ? { namespace: generator.namespace } : {}),
    ...(generator.options?.labels ? { labels: generator.options.labels } : {}),
  },
  data: Object.fromEntries((generator.files ?? []).map((file) => [basename(file), readText(`${DIR}/${file}`)])),
}));
const objects = [
  ...files.flatMap((file) => parseManifests(readText(`${DIR}/${file}`), `${DIR}/${file}`)),
  ...generated,
];
const runtimeStage = parseDockerfile(readText("Dockerfile")).stages.at(-1);
const IMAGE_ENV = runtimeStage ? envOf(runtimeStage) : {};
const chartVersion = (parse(readText("deploy/helm/moniro/Chart.yaml")) as { appVersion: string }).appVersion;

function statefulSetOf(component: string): K8sObject {
  const found = byKind(objects, "StatefulSet").find(
    (s) => s.metadata.labels?.["app.kubernetes.io/component"] === component,
  );
  if (!found) throw new Error(`k8s/ has no StatefulSet ${component}`);
  return found;
}

/** The chart rendered with default values (plus an OTLP endpoint, which k8s/ sets). */
function chartObjects(): K8sObject[] {
  const output = run(tool("helm"), [
    "template",
    "moniro",
    "deploy/helm/moniro",
    "--namespace",
    "moniro",
    "--set",
    "otel.endpoint=http://collector:4318",
  ]);
  return parseManifests(output, "helm template");
}

/** The same Secret with every key filled in, as a user does before applying. */
function withSecretsFilledIn(all: K8sObject[]): K8sObject[] {
  return all.map((o) =>
    o.kind === "Secret"
      ? { ...o, stringData: Object.fromEntries(Object.keys(o.stringData ?? {}).map((k) => [k, `filled-${k}`])) }
      : o,
  );
}

describe("plain manifests k8s/", () => {
  it("parses every file strictly and validates every object against the Kubernetes schema", () => {
    expect(files.length).toBeGreaterThan(0);
    for (const file of files) {
      for (const object of parseManifests(readText(`${DIR}/${file}`), `${DIR}/${file}`)) {
        validateObject(object, `${DIR}/${file}`);
        if (object.kind !== "Namespace") expect(object.metadata.namespace, `${DIR}/${file}`).toBe("moniro");
      }
    }
    for (const object of generated) {
      validateObject(object, `${DIR}/kustomization.yaml`);
      expect(object.metadata.namespace, object.metadata.name).toBe("moniro");
    }
  });

  it("lists every manifest in kustomization.yaml, and kubectl kustomize renders it with the image tag", () => {
    expect([...kustomization.resources].sort()).toEqual([...files].sort());
    const rendered = parseManifests(run(tool("kubectl"), ["kustomize", DIR]), "kubectl kustomize k8s");
    expect(rendered).toHaveLength(objects.length);
    for (const object of rendered) validateObject(object, "kubectl kustomize k8s");
    const image = kustomization.images?.find((i) => i.name === "moniro");
    for (const deployment of byKind(rendered, "Deployment")) {
      expect(containerOf(deployment).image).toBe(`${image?.newName ?? "moniro"}:${image?.newTag}`);
    }
  });

  it("gives NATS exactly k8s/nats.conf, the generated least-privilege config, as its ConfigMap (renamed with its hash, so a change rolls NATS)", () => {
    // k8s/nats.conf is what `npm run nats-config` writes.
    expect(readText(`${DIR}/nats.conf`)).toBe(natsConfigFiles()["k8s/nats.conf"]);
    const rendered = parseManifests(run(tool("kubectl"), ["kustomize", DIR]), "kubectl kustomize k8s");
    const nats = byKind(rendered, "StatefulSet").find(
      (s) => s.metadata.labels?.["app.kubernetes.io/component"] === "nats",
    );
    const volume = (nats?.spec.template.spec.volumes ?? []).find((v: { name: string }) => v.name === "config");
    const configMap = byKind(rendered, "ConfigMap").find((c) => c.metadata.name === volume?.configMap?.name);
    expect(configMap?.metadata.name).toMatch(/^moniro-nats-config-[a-z0-9]+$/);
    expect(configMap?.metadata.namespace).toBe("moniro");
    expect(configMap?.data).toEqual({ "nats.conf": readText(`${DIR}/nats.conf`) });
    // Mounted where the server's -c reads it.
    const container = containerOf(nats as K8sObject);
    const mount = container.volumeMounts.find((m: { name: string }) => m.name === "config");
    expect(container.command.at(-1)).toMatch(new RegExp(`; exec nats-server -c ${mount.mountPath}/nats\\.conf$`));
  });

  it("has every reference resolve: ConfigMaps, Secret keys, the PVC, Service selectors, the HPA target", () => {
    expect(danglingReferences(objects)).toEqual([]);
  });

  it("has one Deployment per service running its entry point, with probes on MONIRO_HTTP_PORT", () => {
    expect(byKind(objects, "Deployment")).toHaveLength(SERVICES.length);
    for (const service of SERVICES) {
      expect(serviceContainerProblems(deploymentOf(objects, service), service)).toEqual([]);
    }
  });

  it("agrees with the Helm chart's defaults on image, command, ports, probes, replicas, resources and security", () => {
    const chart = chartObjects();
    for (const service of SERVICES) {
      const mine = deploymentOf(objects, service);
      const theirs = deploymentOf(chart, service);
      const a = containerOf(mine);
      const b = containerOf(theirs);
      const where = `k8s/${service}.yaml vs chart`;
      expect(a.image, where).toBe(b.image);
      expect(a.image, where).toBe(`moniro:${chartVersion}`);
      expect(a.command, where).toEqual(b.command);
      expect(a.args, where).toEqual(b.args);
      expect(a.ports, where).toEqual(b.ports);
      expect(a.livenessProbe, where).toEqual(b.livenessProbe);
      expect(a.readinessProbe, where).toEqual(b.readinessProbe);
      expect(a.resources, where).toEqual(b.resources);
      expect(a.securityContext, where).toEqual(b.securityContext);
      expect(a.volumeMounts, where).toEqual(b.volumeMounts);
      expect(mine.spec.replicas, where).toEqual(theirs.spec.replicas);
      expect(mine.spec.strategy, where).toEqual(theirs.spec.strategy);
      expect(mine.spec.template.spec.securityContext, where).toEqual(theirs.spec.template.spec.securityContext);
      expect(mine.spec.template.spec.hostUsers, where).toEqual(theirs.spec.template.spec.hostUsers);
      expect(mine.spec.template.spec.automountServiceAccountToken, where).toBe(false);
      // Same variables (k8s/ leaves out only the optional NATS token and the open-access switch).
      const optional = ["MONIRO_NATS_TOKEN", "MONIRO_GATEWAY_OPEN"];
      expect(envNamesOf(mine, objects).sort(), where).toEqual(
        envNamesOf(theirs, chart)
          .filter((n) => !optional.includes(n))
          .sort(),
      );
    }
    const [hpa] = byKind(objects, "HorizontalPodAutoscaler");
    const [chartHpa] = byKind(chart, "HorizontalPodAutoscaler");
    expect(hpa?.spec.scaleTargetRef.name).toBe("moniro-tool-executor");
    expect({ ...hpa?.spec, scaleTargetRef: undefined }).toEqual({ ...chartHpa?.spec, scaleTargetRef: undefined });
  });

  it("NATS and Redis refuse to start while one of their passwords is empty (the Secret as shipped)", () => {
    const filled = withSecretsFilledIn(objects);
    const bin = mkdtempSync(join(tmpdir(), "moniro-k8s-bin-"));
    try {
      // Stand-ins that say they started, and with what.
      for (const server of ["nats-server", "redis-server"]) {
        writeFileSync(join(bin, server), `#!/bin/sh\necho ${server} started\n`, { mode: 0o755 });
      }
      const start = (component: string, env: Record<string, string>) => {
        const script = (containerOf(statefulSetOf(component)).command as string[])[2] as string;
        return spawnSync("sh", ["-c", script], {
          env: { ...env, PATH: `${bin}:${process.env.PATH}` },
          encoding: "utf8",
        });
      };
      for (const [component, blank] of [
        ["nats", "MONIRO_NATS_PASSWORD_SIGNAL_BRIDGE"],
        ["redis", "MONIRO_REDIS_PASSWORD"],
      ] as const) {
        const env = effectiveEnv(statefulSetOf(component), filled);
        expect(start(component, env), component).toMatchObject({ status: 0, stdout: `${component}-server started\n` });
        expect(start(component, { ...env, [blank]: "" }), component).toMatchObject({
          status: 1,
          stdout: "",
          stderr: expect.stringContaining(`${blank} is empty`),
        });
      }
    } finally {
      rmSync(bin, { recursive: true, force: true });
    }
  });

  it("runs NATS and Redis with logins, as the chart does by default, and each secret reaches only its pods", () => {
    const chart = chartObjects();
    for (const server of ["nats", "redis"]) {
      const of = (all: K8sObject[]) =>
        byKind(all, "StatefulSet").find((s) => s.metadata.labels?.["app.kubernetes.io/component"] === server);
      const mine = of(objects) as K8sObject;
      const theirs = of(chart) as K8sObject;
      expect(mine, server).toBeDefined();
      const where = `k8s/${server}.yaml vs chart`;
      // Same container: image, command, the password from the Secret, probes, security.
      expect(containerOf(mine), where).toEqual(containerOf(theirs));
      expect(mine.spec.template.spec.securityContext, where).toEqual(theirs.spec.template.spec.securityContext);
      expect(mine.spec.template.spec.automountServiceAccountToken, where).toBe(false);
    }
    const natsConfig = byKind(objects, "ConfigMap").find((c) => c.metadata.name === "moniro-nats-config");
    const conf = natsConfig?.data?.["nats.conf"] ?? "";
    // NATS gets every service user's password from the Secret, as its config reads them, and nothing else.
    const referenced = [...conf.matchAll(/password: \$([A-Z_]+)/g)].map((m) => m[1] as string);
    expect(referenced).toEqual(NATS_USERS.map((user) => passwordVariable(user)));
    const filled = withSecretsFilledIn(objects);
    expect(effectiveEnv(statefulSetOf("nats"), filled)).toEqual(
      Object.fromEntries(referenced.map((name) => [name, `filled-${name}`])),
    );
    expect(conf).not.toMatch(/password:\s*"/);
    expect(containerOf(statefulSetOf("redis")).command.join(" ")).toMatch(/--user default off/);
    for (const service of SERVICES) {
      const env = effectiveEnv(deploymentOf(filled, service), filled, IMAGE_ENV);
      // Its own NATS user and its own password; no other service's.
      const own = passwordVariable(service);
      expect({ service, user: env.MONIRO_NATS_USER, password: env.MONIRO_NATS_PASSWORD }).toEqual({
        service,
        user: service,
        password: `filled-${own}`,
      });
      for (const other of SERVICES.filter((s) => s !== service)) {
        expect(Object.values(env), service).not.toContain(`filled-${passwordVariable(other)}`);
      }
      expect(env.MONIRO_REDIS_PASSWORD, service).toBe(
        service === "signal-bridge" ? undefined : "filled-MONIRO_REDIS_PASSWORD",
      );
      expect(env.ANTHROPIC_API_KEY, service).toBe(service === "agent-runner" ? "filled-ANTHROPIC_API_KEY" : undefined);
      expect(env.MONIRO_API_KEYS, service).toBe(service === "gateway" ? "filled-MONIRO_API_KEYS" : undefined);
      expect(env, service).not.toHaveProperty("MONIRO_EXEC_UNSAFE_NO_SANDBOX");
    }
    for (const file of files) expect(readText(`${DIR}/${file}`), file).not.toContain("MONIRO_EXEC_UNSAFE_NO_SANDBOX");
  });

  it("runs Redis with the default user off and one ACL user, the services', with redisAclRules of config.yaml's prefix", async () => {
    const filled = withSecretsFilledIn(objects);
    const redis = statefulSetOf("redis");
    const container = containerOf(redis);
    expect(container.command.slice(0, 2)).toEqual(["sh", "-c"]);
    const env = effectiveEnv(redis, filled);
    const password = env.MONIRO_REDIS_PASSWORD as string;
    expect(password).toBe("filled-MONIRO_REDIS_PASSWORD");
    // What redis-server is given, as the container's shell makes it.
    const args = redisServerArgs(container.command.slice(2).join(" "), env);
    expect(args.join(" ")).not.toContain(password);
    const configMap = byKind(objects, "ConfigMap").find((c) => c.metadata.name === "moniro-config");
    const prefix = configMap?.data?.MONIRO_REDIS_PREFIX as string;
    expect(prefix).toBe("moniro:");
    const user = configMap?.data?.MONIRO_REDIS_USERNAME as string;
    expect(user).toBe("moniro");
    const hash = createHash("sha256").update(password).digest("hex");
    expect(redisUsersOf(args)).toEqual({
      default: ["off", "~*", "&*", "+@all"],
      [user]: ["on", `#${hash}`, ...redisAclRules(prefix)],
    });
    // Every service that uses Redis logs in as that user, with that prefix.
    for (const service of SERVICES.filter((s) => s !== "signal-bridge")) {
      const own = effectiveEnv(deploymentOf(filled, service), filled, IMAGE_ENV);
      expect({ service, user: own.MONIRO_REDIS_USERNAME, prefix: own.MONIRO_REDIS_PREFIX }).toEqual({
        service,
        user,
        prefix,
      });
    }
    // A redis-server given those arguments: ready by its probe; nobody gets in without the password;
    // the services' user may not wipe it, change it, list every key or touch a key outside the prefix;
    // what it writes with a script (a MULTI/EXEC in the AOF) survives a restart.
    const probe = container.readinessProbe.exec.command as string[];
    expect(probe.slice(0, 2)).toEqual(["sh", "-c"]);
    const seen = await observeRedis(
      args,
      user,
      password,
      probe[2] as string,
      [
        ["FLUSHALL"],
        ["CONFIG", "GET", "*"],
        ["KEYS", "*"],
        ["SET", "other:key", "1"],
        ["SET", `${prefix}agent:a`, "1"],
        scriptedWrite(prefix).write,
      ],
      [scriptedWrite(prefix).readBack],
    );
    expect(seen.probeExit).toBe(0);
    expect(seen.anonymous).toMatch(/^NOAUTH/);
    const [flushall, config, keys, foreign, own, scripted] = seen.replies;
    for (const refused of [flushall, config, keys]) expect(refused).toMatch(/^NOPERM .*permissions to run/);
    expect(foreign).toMatch(/^NOPERM .*keys/);
    expect(own).toBe("OK");
    expect(scripted).toBe("1");
    expect(seen.restarted).toEqual(["kept\n1\n1"]);
  });

  it("gives every service an environment its config loader accepts once the Secret is filled in", async () => {
    const filled = withSecretsFilledIn(objects);
    for (const service of SERVICES) {
      const env = effectiveEnv(deploymentOf(filled, service), filled, IMAGE_ENV);
      expect({ service, error: await configErrorOf(service, env) }).toEqual({ service, error: undefined });
      expect(env.MONIRO_HTTP_HOST, service).toBe("0.0.0.0");
      expect(env.OTEL_SERVICE_NAME, service).toBe(service);
      expect(env.MONIRO_NATS_URL, service).toMatch(/^nats:\/\//);
      expect(env.MONIRO_REDIS_URL, service).toMatch(/^redis:\/\//);
      expect(env.OTEL_EXPORTER_OTLP_ENDPOINT, service).toMatch(/^http:\/\/.+:4318$/);
    }
    // With the placeholders as shipped, the gateway stops at start naming what to fill in,
    // and secret.yaml says so.
    const shipped = effectiveEnv(deploymentOf(objects, "gateway"), objects, IMAGE_ENV);
    expect(await configErrorOf("gateway", shipped)).toMatch(/MONIRO_API_KEYS/);
    expect(readText("k8s/secret.yaml")).toMatch(/gateway (will not start|refuses to start)/);
  });

  it("gives the webhook secrets (an optional Secret) to the gateway only", () => {
    for (const service of SERVICES) {
      const refs = (containerOf(deploymentOf(objects, service)).envFrom ?? []).flatMap(
        (source: { secretRef?: { name: string; optional?: boolean } }) => (source.secretRef ? [source.secretRef] : []),
      );
      expect(refs, service).toEqual(service === "gateway" ? [{ name: "moniro-webhooks", optional: true }] : []);
    }
  });

  it("sets only environment variable names the services' code reads", () => {
    for (const service of SERVICES) {
      const names = envNamesOf(deploymentOf(objects, service), objects);
      expect({ service, unknown: unknownEnvNames(service, names) }).toEqual({ service, unknown: [] });
    }
  });

  it("keeps credentials in the Secret, never in a ConfigMap or a plain env value", () => {
    for (const configMap of byKind(objects, "ConfigMap")) {
      expect(Object.keys(configMap.data ?? {}).filter((k) => SECRET_NAME.test(k))).toEqual([]);
    }
    for (const deployment of byKind(objects, "Deployment")) {
      for (const variable of containerOf(deployment).env ?? []) {
        if (SECRET_NAME.test(variable.name)) expect(variable.valueFrom?.secretKeyRef, variable.name).toBeDefined();
      }
    }
  });

  it("mounts the workflows ConfigMap read-only into the gateway only, at the MONIRO_WORKFLOWS_DIR it loads", async () => {
    expect(byKind(objects, "ConfigMap").find((c) => c.metadata.name === "moniro-workflows")).toBeDefined();
    await expectWorkflowsMountedInGatewayOnly(withSecretsFilledIn(objects), IMAGE_ENV);
  });

  it("ships agent definitions that the agent-runner's loader accepts", async () => {
    const agents = byKind(objects, "ConfigMap").find((c) => c.metadata.name === "moniro-agents");
    const entries = Object.entries(agents?.data ?? {});
    expect(entries.length).toBeGreaterThan(0);
    for (const [file, text] of entries) {
      const definition = await parseAgentDefinition(`/etc/moniro/agents/${file}`, text);
      expect(`${definition.name}.yaml`).toBe(file);
    }
  });
});
