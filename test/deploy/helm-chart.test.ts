// The Helm chart (deploy/helm/moniro), checked offline: `helm lint` and
// `helm template` with ./tools/helm (installed by `bash .ci/tools.sh`; the
// tests fail, not skip, without it), every rendered object validated against
// the Kubernetes OpenAPI schema (kubernetes-models), and every service's
// rendered environment run through that service's own config loader.
// Not checked here: applying to a real API server (no cluster on this machine).
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { NATS_USERS, natsAuthorization, natsServerConfig, passwordVariable } from "@moniro/bus";
import { loadWorkflowDefinitions } from "@moniro/config";
import { redisAclRules } from "@moniro/store/redis-acl";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { tempDir } from "../support/temp-dir.js";
import { envOf, parseDockerfile } from "./dockerfile.js";
import {
  byKind,
  CHART,
  configMapMountOf,
  containerOf,
  danglingReferences,
  deploymentOf,
  effectiveEnv,
  envNamesOf,
  envValue,
  type K8sObject,
  readText,
  renderChart,
  renderChartError,
  run,
  SERVICES,
  serviceCommand,
  serviceContainerProblems,
  tool,
  validateObject,
} from "./manifests.js";
import { configErrorOf, SECRET_NAME, unknownEnvNames } from "./service-env.js";
import { expectWorkflowsMountedInGatewayOnly } from "./workflows-mount.js";

const chart = parse(readText(`${CHART}/Chart.yaml`)) as { appVersion: string; version: string };
const values = parse(readText(`${CHART}/values.yaml`)) as {
  services: Record<string, { port: number; replicas: number }>;
};
const runtimeStage = parseDockerfile(readText("Dockerfile")).stages.at(-1);
const IMAGE_ENV = runtimeStage ? envOf(runtimeStage) : {};

function valuesFile(text: string): string {
  const dir = tempDir("moniro-helm-");
  const file = join(dir, "values.yaml");
  writeFileSync(file, text);
  return file;
}

function validateAll(objects: K8sObject[], source: string): void {
  for (const object of objects) validateObject(object, source);
}

/** The release's NATS StatefulSet. */
function natsServer(objects: K8sObject[]): K8sObject {
  const found = byKind(objects, "StatefulSet").find(
    (s) => s.metadata.labels?.["app.kubernetes.io/component"] === "nats",
  );
  if (!found) throw new Error("no nats StatefulSet");
  return found;
}

/** The nats.conf the NATS pod runs with: the ConfigMap its config volume mounts (`-c /etc/nats/nats.conf`). */
function natsConfOf(objects: K8sObject[]): string {
  const nats = natsServer(objects);
  expect(containerOf(nats).command.at(-1)).toMatch(/; exec nats-server -c \/etc\/nats\/nats\.conf$/);
  const volume = nats.spec.template.spec.volumes.find((v: { name: string }) => v.name === "config");
  const configMap = byKind(objects, "ConfigMap").find((c) => c.metadata.name === volume.configMap.name);
  const conf = configMap?.data?.["nats.conf"];
  if (conf === undefined) throw new Error(`ConfigMap ${volume.configMap.name} has no nats.conf`);
  return conf;
}

/** The release's Redis StatefulSet. */
function redisServer(objects: K8sObject[]): K8sObject {
  const found = byKind(objects, "StatefulSet").find(
    (s) => s.metadata.labels?.["app.kubernetes.io/component"] === "redis",
  );
  if (!found) throw new Error("no redis StatefulSet");
  return found;
}

/**
 * The arguments redis-server gets in the Redis pod: the container's command, run as the pod runs
 * it (sh, with MONIRO_REDIS_PASSWORD set), with a stand-in `redis-server` first on PATH that
 * prints its arguments. So the shell's quoting is checked too, not only the template's text.
 */
function redisServerArgs(objects: K8sObject[], password: string): string[] {
  const dir = tempDir("moniro-redis-args-");
  writeFileSync(join(dir, "redis-server"), "#!/bin/sh\nprintf '%s\\0' \"$@\"\n", { mode: 0o755 });
  const [command, ...args] = containerOf(redisServer(objects)).command as string[];
  const output = execFileSync(command as string, args, {
    encoding: "utf8",
    env: { PATH: `${dir}:${process.env.PATH}`, MONIRO_REDIS_PASSWORD: password },
  });
  return output.split("\0").slice(0, -1);
}

/**
 * The `--user` directives among redis-server's arguments, by user name: the words after the name
 * up to the next `--option` (redis-server reads each `--name` as the start of a config line).
 */
function redisUsers(args: string[]): Record<string, string[]> {
  const users: Record<string, string[]> = {};
  args.forEach((arg, i) => {
    if (arg !== "--user") return;
    const end = args.findIndex((a, j) => j > i && a.startsWith("--"));
    const [name, ...rules] = args.slice(i + 1, end === -1 ? undefined : end);
    if (name === undefined || name in users) throw new Error(`--user without a name or twice: ${args.join(" ")}`);
    users[name] = rules;
  });
  return users;
}

const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");

/** How a container's variable `name` is set from a Secret: its secretKeyRef, or undefined. */
function secretRefOf(
  container: {
    env?: Array<{ name: string; valueFrom?: { secretKeyRef?: { name: string; key: string; optional?: boolean } } }>;
  },
  name: string,
) {
  return container.env?.find((e) => e.name === name)?.valueFrom?.secretKeyRef;
}

/** Values a production install sets (docs/deployment.md's example). */
const PRODUCTION = [
  "--set",
  "image.repository=registry.example.com/moniro,image.tag=1.2.3",
  "--set",
  "nats.deploy=false,nats.url=nats://nats.nats:4222,redis.deploy=false,redis.url=redis://redis-master.redis:6379",
  "--set",
  "otel.endpoint=http://jaeger-collector.observability:4318",
  "--set",
  "secrets.anthropicApiKey=sk-ant-test-0000,secrets.gatewayApiKeys=gw-key-1111",
  "--set-string",
  "agents.definitions.alice\\.yaml=name: alice\nmodel: claude-sonnet-4-5\nbackend: anthropic\n",
];

describe("helm chart deploy/helm/moniro", () => {
  it("passes helm lint, also with --strict and with production values", () => {
    const helm = tool("helm");
    expect(run(helm, ["lint", CHART])).toMatch(/1 chart\(s\) linted, 0 chart\(s\) failed/);
    expect(run(helm, ["lint", "--strict", CHART])).toMatch(/0 chart\(s\) failed/);
    expect(run(helm, ["lint", "--strict", CHART, ...PRODUCTION])).toMatch(/0 chart\(s\) failed/);
  });

  it("renders with default values into objects that all validate against the Kubernetes schema", () => {
    const objects = renderChart();
    validateAll(objects, "helm template (defaults)");
    expect(danglingReferences(objects)).toEqual([]);
    const kinds = objects.map((o) => o.kind).sort();
    expect(kinds).toEqual(
      [
        ...Array(5).fill("Deployment"),
        ...Array(7).fill("Service"),
        "StatefulSet",
        "StatefulSet",
        "ConfigMap",
        "ConfigMap",
        "ConfigMap",
        "ConfigMap",
        "Secret",
        "PersistentVolumeClaim",
        "HorizontalPodAutoscaler",
      ].sort(),
    );
  });

  it("renders one Deployment per service, running that service's entry point with probes on its port", () => {
    const objects = renderChart();
    expect(byKind(objects, "Deployment").map((d) => d.metadata.labels?.["app.kubernetes.io/component"])).toEqual(
      expect.arrayContaining([...SERVICES]),
    );
    for (const service of SERVICES) {
      const deployment = deploymentOf(objects, service);
      expect(deployment.metadata.name).toBe(`moniro-${service}`);
      expect(serviceContainerProblems(deployment, service)).toEqual([]);
      const container = containerOf(deployment);
      expect(container.ports[0].containerPort).toBe(values.services[service]?.port);
      expect(envValue(container, "MONIRO_HTTP_PORT")).toBe(String(values.services[service]?.port));
      expect(deployment.spec.template.metadata.annotations["prometheus.io/port"]).toBe(
        String(values.services[service]?.port),
      );
      // Each Service reaches the container port by name.
      const svc = byKind(objects, "Service").find((s) => s.metadata.name === `moniro-${service}`);
      expect(svc?.spec.ports[0].targetPort).toBe("http");
    }
  });

  it("moves container port, MONIRO_HTTP_PORT, probes and the scrape annotation together when a port changes", () => {
    const objects = renderChart(["--set", "services.scheduler.port=9300"]);
    const deployment = deploymentOf(objects, "scheduler");
    expect(serviceContainerProblems(deployment, "scheduler")).toEqual([]);
    expect(containerOf(deployment).ports[0].containerPort).toBe(9300);
    expect(envValue(containerOf(deployment), "MONIRO_HTTP_PORT")).toBe("9300");
    expect(deployment.spec.template.metadata.annotations["prometheus.io/port"]).toBe("9300");
  });

  it("renders podAnnotations once each, as strings, over the scrape annotations; never over a checksum", () => {
    // A key the chart sets too was rendered twice (a YAML map with a duplicate key), and --set's false a boolean.
    const objects = renderChart([
      "--set",
      "podAnnotations.prometheus\\.io/scrape=false,podAnnotations.team=core,podAnnotations.replicas=3",
    ]);
    for (const service of SERVICES) {
      const annotations = deploymentOf(objects, service).spec.template.metadata.annotations;
      expect(annotations, service).toMatchObject({
        "prometheus.io/scrape": "false",
        "prometheus.io/path": "/metrics",
        team: "core",
        replicas: "3",
      });
      expect(annotations["checksum/config"], service).toMatch(/^[0-9a-f]{64}$/);
    }
    expect(renderChartError(["--set", "podAnnotations.checksum/config=mine"])).toContain(
      "podAnnotations.checksum/config: the chart sets checksum/ annotations itself",
    );
  });

  it("uses the image <repository>:<appVersion> by default and image.repository/image.tag when set", () => {
    for (const deployment of byKind(renderChart(), "Deployment")) {
      expect(containerOf(deployment).image).toBe(`moniro:${chart.appVersion}`);
    }
    for (const deployment of byKind(renderChart(PRODUCTION), "Deployment")) {
      expect(containerOf(deployment).image).toBe("registry.example.com/moniro:1.2.3");
    }
  });

  it("wires NATS URL, Redis URL and the OTLP endpoint from values into every service's environment", () => {
    const objects = renderChart(PRODUCTION);
    validateAll(objects, "helm template (production values)");
    expect(danglingReferences(objects)).toEqual([]);
    for (const service of SERVICES) {
      const env = effectiveEnv(deploymentOf(objects, service), objects, IMAGE_ENV);
      expect(env.MONIRO_NATS_URL).toBe("nats://nats.nats:4222");
      expect(env.MONIRO_REDIS_URL).toBe("redis://redis-master.redis:6379");
      expect(env.OTEL_EXPORTER_OTLP_ENDPOINT).toBe("http://jaeger-collector.observability:4318");
      expect(env.OTEL_SERVICE_NAME).toBe(service);
      // Probes come from the kubelet on the pod IP: the ops server must not listen on loopback only.
      expect(env.MONIRO_HTTP_HOST).toBe("0.0.0.0");
    }
    // Without otel.endpoint no endpoint is set, so services do not try to export.
    const defaults = renderChart();
    for (const service of SERVICES) {
      expect(effectiveEnv(deploymentOf(defaults, service), defaults).OTEL_EXPORTER_OTLP_ENDPOINT).toBeUndefined();
    }
  });

  it("gives every service an environment its own config loader accepts (production values)", async () => {
    const objects = renderChart(PRODUCTION);
    for (const service of SERVICES) {
      const env = effectiveEnv(deploymentOf(objects, service), objects, IMAGE_ENV);
      expect({ service, error: await configErrorOf(service, env) }).toEqual({ service, error: undefined });
    }
  });

  it("sets only environment variable names the services' code reads", () => {
    const objects = renderChart([
      ...PRODUCTION,
      "--set",
      "nats.user=moniro,secrets.natsPassword=pw,services.signal-bridge.signalUrl=http://signal-cli:8080",
    ]);
    // The release's NATS (defaults): each service's own user and password.
    const defaults = renderChart(["--set", "services.signal-bridge.signalUrl=http://signal-cli:8080"]);
    for (const service of SERVICES) {
      for (const [values, all] of [
        ["own NATS", objects],
        ["defaults", defaults],
      ] as const) {
        const names = envNamesOf(deploymentOf(all, service), all);
        expect({ values, service, unknown: unknownEnvNames(service, names) }).toEqual({ values, service, unknown: [] });
      }
    }
  });

  it("with default values, the gateway refuses to start without API keys and NOTES.txt says so", async () => {
    const objects = renderChart();
    const gateway = effectiveEnv(deploymentOf(objects, "gateway"), objects, IMAGE_ENV);
    expect(await configErrorOf("gateway", gateway)).toMatch(/MONIRO_API_KEYS/);
    for (const service of SERVICES.filter((s) => s !== "gateway")) {
      const env = effectiveEnv(deploymentOf(objects, service), objects, IMAGE_ENV);
      expect({ service, error: await configErrorOf(service, env) }).toEqual({ service, error: undefined });
    }
    const notes = run(tool("helm"), ["install", "moniro", CHART, "--dry-run=client", "--namespace", "moniro"]);
    expect(notes).toMatch(/NOTES:[\s\S]*gateway will not start[\s\S]*secrets\.gatewayApiKeys/);
    // Open access listens on loopback only, which a Service cannot reach: the chart has no switch for it.
    expect(() => renderChart(["--set", "services.gateway.authDisabled=true"])).toThrow(/authDisabled/);
  });

  it("keeps secrets out of ConfigMaps and plain env values: they reach the pods through secretKeyRef", () => {
    const natsSentinels = Object.fromEntries(
      NATS_USERS.map((user) => [user, `natsPw${user.replaceAll("-", "")}SENTINEL`]),
    );
    const sentinels = ["sk-ant-SENTINEL", "gw-SENTINEL", ...Object.values(natsSentinels)];
    const objects = renderChart([
      "--set",
      `secrets.anthropicApiKey=${sentinels[0]},secrets.gatewayApiKeys=${sentinels[1]}`,
      "--set",
      NATS_USERS.map((user) => `secrets.natsPasswords.${user}=${natsSentinels[user]}`).join(","),
    ]);
    // Your own NATS: the one password of nats.user, also in the Secret only.
    const ownNatsPassword = "nats-pw-SENTINEL";
    const own = renderChart([...PRODUCTION, "--set", `nats.user=moniro,secrets.natsPassword=${ownNatsPassword}`]);
    // Or its token.
    const ownToken = "nats-token-SENTINEL";
    const tokened = renderChart([...PRODUCTION, "--set", `nats.user=,secrets.natsToken=${ownToken}`]);
    for (const [all, secrets] of [
      [objects, sentinels],
      [own, [ownNatsPassword]],
      [tokened, [ownToken]],
    ] as const) {
      for (const object of all.filter((o) => o.kind !== "Secret")) {
        const text = JSON.stringify(object);
        for (const sentinel of secrets) expect(text, `${object.kind} ${object.metadata.name}`).not.toContain(sentinel);
      }
      for (const configMap of byKind(all, "ConfigMap")) {
        expect(Object.keys(configMap.data ?? {}).filter((key) => SECRET_NAME.test(key))).toEqual([]);
      }
      const secret = byKind(all, "Secret")[0] as K8sObject;
      expect(Object.values(secret.stringData ?? {})).toEqual(expect.arrayContaining([...secrets]));
    }
    for (const service of SERVICES) {
      expect(effectiveEnv(deploymentOf(own, service), own).MONIRO_NATS_PASSWORD, service).toBe(ownNatsPassword);
    }
    const runner = effectiveEnv(deploymentOf(objects, "agent-runner"), objects);
    expect(runner.ANTHROPIC_API_KEY).toBe(sentinels[0]);
    expect(runner.MONIRO_NATS_PASSWORD).toBe(natsSentinels["agent-runner"]);
    expect(effectiveEnv(deploymentOf(objects, "gateway"), objects).MONIRO_API_KEYS).toBe(sentinels[1]);
    // Only the agent-runner gets the LLM key, only the gateway the API keys, each service only its own NATS password.
    for (const service of SERVICES) {
      const names = (containerOf(deploymentOf(objects, service)).env ?? []).map((e: { name: string }) => e.name);
      expect(names.includes("ANTHROPIC_API_KEY"), service).toBe(service === "agent-runner");
      expect(names.includes("MONIRO_API_KEYS"), service).toBe(service === "gateway");
      expect(names.includes("MONIRO_REDIS_PASSWORD"), service).toBe(service !== "signal-bridge");
      const values = JSON.stringify(effectiveEnv(deploymentOf(objects, service), objects));
      expect(values.includes(sentinels[0] as string), service).toBe(service === "agent-runner");
      expect(values.includes(sentinels[1] as string), service).toBe(service === "gateway");
      for (const user of NATS_USERS) {
        expect(values.includes(natsSentinels[user] as string), `${service}: ${user}'s NATS password`).toBe(
          user === service,
        );
      }
    }
  });

  it("gives webhook secrets to the gateway only: a Secret of their own (or one you manage) through envFrom", () => {
    const sentinel = "hook-secret-SENTINEL-0123456789";
    const objects = renderChart(["--set", `webhooks.secrets.GITHUB_WEBHOOK_SECRET=${sentinel}`]);
    for (const object of objects) validateObject(object, "helm template --set webhooks.secrets…");
    const secret = byKind(objects, "Secret").find((s) => s.metadata.name === "moniro-webhooks");
    expect(secret?.stringData).toEqual({ GITHUB_WEBHOOK_SECRET: sentinel });
    for (const service of SERVICES) {
      const container = containerOf(deploymentOf(objects, service));
      const refs = (container.envFrom ?? []).flatMap((source: { secretRef?: { name: string } }) =>
        source.secretRef ? [source.secretRef.name] : [],
      );
      expect(refs, service).toEqual(service === "gateway" ? ["moniro-webhooks"] : []);
      expect(JSON.stringify(deploymentOf(objects, service)), service).not.toContain(sentinel);
    }
    for (const configMap of byKind(objects, "ConfigMap")) expect(JSON.stringify(configMap)).not.toContain(sentinel);
    // A Secret you manage: referenced, not rendered; without either, nothing is referenced.
    const managed = renderChart(["--set", "webhooks.existingSecret=my-hook-secrets"]);
    expect(byKind(managed, "Secret").map((s) => s.metadata.name)).not.toContain("moniro-webhooks");
    expect(containerOf(deploymentOf(managed, "gateway")).envFrom).toContainEqual({
      secretRef: { name: "my-hook-secrets" },
    });
    expect(
      (containerOf(deploymentOf(renderChart(), "gateway")).envFrom ?? []).filter(
        (s: { secretRef?: unknown }) => s.secretRef,
      ),
    ).toEqual([]);
    expect(renderChartError(["--set", "webhooks.secrets.bad-name=0123456789abcdef0"])).toMatch(/webhooks/);
    // A key that is one of the services' settings would reach the gateway's environment: refused by name.
    for (const key of ["MONIRO_GATEWAY_OPEN", "NODE_OPTIONS", "OTEL_EXPORTER_OTLP_ENDPOINT"]) {
      expect(renderChartError(["--set-string", `webhooks.secrets.${key}=0123456789abcdef0`]), key).toContain(
        `webhooks.secrets.${key}: ${key} is one of the services' own settings`,
      );
    }
    const hookNamed = renderChart(["--set-string", "webhooks.secrets.MONIRO_HOOK_GITHUB=0123456789abcdef0"]);
    expect(byKind(hookNamed, "Secret").map((s) => s.metadata.name)).toContain("moniro-webhooks");
  });

  it("uses secrets.existingSecret instead of rendering a Secret", () => {
    const objects = renderChart(["--set", "secrets.create=false,secrets.existingSecret=my-moniro-keys"]);
    expect(byKind(objects, "Secret")).toEqual([]);
    expect(danglingReferences(objects, ["my-moniro-keys"])).toEqual([]);
    const refs = (containerOf(deploymentOf(objects, "agent-runner")).env ?? [])
      .map((e: { valueFrom?: { secretKeyRef?: { name: string } } }) => e.valueFrom?.secretKeyRef?.name)
      .filter(Boolean);
    expect(new Set(refs)).toEqual(new Set(["my-moniro-keys"]));
    // The release's NATS reads the services' passwords from that Secret too (keys MONIRO_NATS_PASSWORD_<SERVICE>).
    expect(
      containerOf(natsServer(objects)).env.map((e: { valueFrom: { secretKeyRef: { name: string; key: string } } }) => [
        e.valueFrom.secretKeyRef.name,
        e.valueFrom.secretKeyRef.key,
      ]),
    ).toEqual(NATS_USERS.map((user) => ["my-moniro-keys", passwordVariable(user)]));
  });

  it("scales tool-executor independently: its own HPA, or a fixed replica count when autoscaling is off", () => {
    const hpa = renderChart([
      "--set",
      "services.tool-executor.autoscaling.minReplicas=3,services.tool-executor.autoscaling.maxReplicas=30",
      "--set",
      "services.tool-executor.autoscaling.targetCPUUtilizationPercentage=60,services.gateway.replicas=4",
    ]);
    validateAll(hpa, "helm template (tool-executor HPA)");
    const [autoscaler, ...others] = byKind(hpa, "HorizontalPodAutoscaler");
    expect(others).toEqual([]);
    expect(autoscaler?.spec.scaleTargetRef).toEqual({
      apiVersion: "apps/v1",
      kind: "Deployment",
      name: "moniro-tool-executor",
    });
    expect(autoscaler?.spec.minReplicas).toBe(3);
    expect(autoscaler?.spec.maxReplicas).toBe(30);
    expect(autoscaler?.spec.metrics[0].resource.target.averageUtilization).toBe(60);
    // The HPA owns the count: no replicas field to fight it on every upgrade.
    expect(deploymentOf(hpa, "tool-executor").spec.replicas).toBeUndefined();
    expect(deploymentOf(hpa, "gateway").spec.replicas).toBe(4);
    expect(deploymentOf(hpa, "agent-runner").spec.replicas).toBe(values.services["agent-runner"]?.replicas);

    const fixed = renderChart([
      "--set",
      "services.tool-executor.autoscaling.enabled=false,services.tool-executor.replicas=7",
    ]);
    validateAll(fixed, "helm template (fixed tool-executor)");
    expect(byKind(fixed, "HorizontalPodAutoscaler")).toEqual([]);
    expect(deploymentOf(fixed, "tool-executor").spec.replicas).toBe(7);
    for (const service of SERVICES.filter((s) => s !== "tool-executor")) {
      expect(deploymentOf(fixed, service).spec.replicas).toBe(values.services[service]?.replicas);
    }
  });

  it("adds a memory target to the HPA only when one is set", () => {
    const objects = renderChart(["--set", "services.tool-executor.autoscaling.targetMemoryUtilizationPercentage=80"]);
    validateAll(objects, "helm template (memory target)");
    const metrics = byKind(objects, "HorizontalPodAutoscaler")[0]?.spec.metrics;
    expect(metrics.map((m: { resource: { name: string } }) => m.resource.name)).toEqual(["cpu", "memory"]);
  });

  it("gives any service with autoscaling enabled its own HPA, so no Deployment is left without a replica count", () => {
    const objects = renderChart([
      "--set",
      "services.gateway.autoscaling.enabled=true,services.gateway.autoscaling.maxReplicas=6",
    ]);
    validateAll(objects, "helm template (gateway HPA)");
    expect(danglingReferences(objects)).toEqual([]);
    const targets = byKind(objects, "HorizontalPodAutoscaler").map((h) => h.spec.scaleTargetRef.name);
    expect(targets.sort()).toEqual(["moniro-gateway", "moniro-tool-executor"]);
    // Every Deployment without replicas has an HPA that sets them.
    for (const deployment of byKind(objects, "Deployment")) {
      if (deployment.spec.replicas === undefined) expect(targets).toContain(deployment.metadata.name);
    }
  });

  it("runs the signal bridge as exactly one replica with Recreate rollouts, and refuses more", () => {
    const deployment = deploymentOf(renderChart(), "signal-bridge");
    expect(deployment.spec.replicas).toBe(1);
    expect(deployment.spec.strategy).toEqual({ type: "Recreate" });
    expect(renderChartError(["--set", "services.signal-bridge.replicas=2"])).toMatch(/signal-bridge\/replicas/);
    expect(renderChartError(["--set", "services.signal-bridge.autoscaling.enabled=true"])).toMatch(/signal-bridge/);
  });

  it("renders no Deployment or Service for a disabled service and keeps the others", () => {
    const objects = renderChart(["--set", "services.signal-bridge.enabled=false"]);
    validateAll(objects, "helm template (no signal-bridge)");
    expect(danglingReferences(objects)).toEqual([]);
    expect(objects.filter((o) => o.metadata.name.endsWith("signal-bridge"))).toEqual([]);
    expect(byKind(objects, "Deployment")).toHaveLength(4);
  });

  it("values.schema.json rejects bad values with an error naming the field", () => {
    expect(renderChartError(["-f", valuesFile("services:\n  gateway:\n    replicas: two\n")])).toMatch(
      /services\/gateway\/replicas.*got string, want integer/,
    );
    expect(renderChartError(["--set", "services.tool-executor.port=70000"])).toMatch(/services\/tool-executor\/port/);
    expect(renderChartError(["--set", "services.gatewy.replicas=1"])).toMatch(/gatewy/);
    expect(renderChartError(["--set", "logLevel=verbose"])).toMatch(/logLevel/);
    // Node flags are `--name[=value]` only: no script, no second argument smuggled in with a space.
    expect(renderChartError(["--set-json", 'services.scheduler.nodeFlags=["-e"]'])).toMatch(
      /services\/scheduler\/nodeFlags\/0/,
    );
    expect(renderChartError(["--set-json", 'services.gateway.nodeFlags=["--require /tmp/x.js"]'])).toMatch(
      /services\/gateway\/nodeFlags\/0/,
    );
    expect(renderChartError(["--set", "redis.url=localhost:6379"])).toMatch(/redis\/url/);
    expect(renderChartError(["--set", "subjectNamespace=moniro.prod"])).toMatch(/subjectNamespace/);
    expect(
      renderChartError([
        "--set",
        "services.tool-executor.autoscaling.minReplicas=5,services.tool-executor.autoscaling.maxReplicas=2",
      ]),
    ).toMatch(/minReplicas.*maxReplicas/);
    // helm lint applies the same schema.
    expect(() => run(tool("helm"), ["lint", CHART, "--set", "services.gateway.replicas=two"])).toThrow(
      /services\/gateway\/replicas/,
    );
  });

  it("puts services.<name>.nodeFlags on the service's command line, before its bundle", () => {
    const objects = renderChart([
      "--set-json",
      'services.gateway.nodeFlags=["--max-old-space-size=256","--v8-pool-size=2"]',
    ]);
    expect(containerOf(deploymentOf(objects, "gateway")).args).toEqual([
      "node",
      "--max-old-space-size=256",
      "--v8-pool-size=2",
      "services/gateway/dist/main.js",
    ]);
    // The others keep their defaults (SERVICE_EXTRA_NODE_FLAGS).
    expect(containerOf(deploymentOf(objects, "scheduler")).args).toEqual(serviceCommand("scheduler"));
  });

  it("runs every pod as the image's non-root user with a read-only root filesystem and a writable /tmp", () => {
    const objects = renderChart();
    for (const service of SERVICES) {
      const deployment = deploymentOf(objects, service);
      const pod = deployment.spec.template.spec;
      const container = containerOf(deployment);
      expect(pod.securityContext.runAsNonRoot).toBe(true);
      // The Dockerfile's USER node is uid 1000 in the node images.
      expect(pod.securityContext.runAsUser).toBe(1000);
      expect(container.securityContext.readOnlyRootFilesystem).toBe(true);
      expect(container.securityContext.allowPrivilegeEscalation).toBe(false);
      const mounts = Object.fromEntries(
        container.volumeMounts.map((m: { mountPath: string; name: string }) => [m.mountPath, m.name]),
      );
      expect(mounts["/tmp"]).toBe("tmp");
      const env = effectiveEnv(deployment, objects, IMAGE_ENV);
      expect(mounts[env.MONIRO_AGENTS_DIR as string]).toBe("agents");
      if (service === "tool-executor") expect(mounts[env.MONIRO_WORKSPACES_DIR as string]).toBe("workspaces");
    }
  });

  it("puts agent definitions into the agents ConfigMap and refuses keys that are not <name>.yaml", () => {
    const objects = renderChart(PRODUCTION);
    const agents = byKind(objects, "ConfigMap").find((c) => c.metadata.name === "moniro-agents");
    expect(Object.keys(agents?.data ?? {})).toEqual(["alice.yaml"]);
    expect(agents?.data?.["alice.yaml"]).toContain("name: alice");
    expect(renderChartError(["--set-string", "agents.definitions.alice=name: alice"])).toMatch(
      /must be a file name ending in \.yaml/,
    );
    const own = renderChart(["--set", "agents.existingConfigMap=my-agents"]);
    expect(byKind(own, "ConfigMap").map((c) => c.metadata.name)).toEqual([
      "moniro-config",
      "moniro-nats-config",
      "moniro-workflows",
    ]);
    expect(danglingReferences(own, ["my-agents"])).toEqual([]);
  });

  it("mounts workflow definitions read-only into the gateway only, at its MONIRO_WORKFLOWS_DIR, where it loads them", async () => {
    const review = 'agents:\n  alice: { ref: alice }\nkickoff: "@alice Review the latest change."\n';
    const objects = renderChart([...PRODUCTION, "--set-string", `workflows.definitions.review\\.yaml=${review}`]);
    validateAll(objects, "helm template (a workflow)");
    expect(danglingReferences(objects)).toEqual([]);
    const workflows = byKind(objects, "ConfigMap").find((c) => c.metadata.name === "moniro-workflows");
    expect(workflows?.data).toEqual({ "review.yaml": review });
    await expectWorkflowsMountedInGatewayOnly(objects, IMAGE_ENV);
    // The files as the kubelet projects them load as the gateway loads its directory.
    const dir = tempDir("moniro-workflows-");
    for (const [file, text] of Object.entries(workflows?.data ?? {})) writeFileSync(join(dir, file), text);
    expect([...(await loadWorkflowDefinitions(dir)).keys()]).toEqual(["review"]);
  });

  it("renders an empty workflows ConfigMap by default, uses one you manage, and rolls no pod when a workflow changes", () => {
    const objects = renderChart();
    expect(byKind(objects, "ConfigMap").find((c) => c.metadata.name === "moniro-workflows")?.data ?? {}).toEqual({});
    const own = renderChart(["--set", "workflows.existingConfigMap=my-workflows"]);
    expect(byKind(own, "ConfigMap").map((c) => c.metadata.name)).not.toContain("moniro-workflows");
    expect(configMapMountOf(deploymentOf(own, "gateway"), "my-workflows")?.readOnly).toBe(true);
    expect(danglingReferences(own, ["my-workflows"])).toEqual([]);
    // The gateway reads the directory at each start: an edit needs no rollout, so the
    // pods' config checksum does not depend on the workflows.
    const edited = renderChart(["--set-string", "workflows.definitions.review\\.yaml=kickoff: changed"]);
    for (const service of SERVICES) {
      const checksum = (all: K8sObject[]) =>
        deploymentOf(all, service).spec.template.metadata.annotations["checksum/config"];
      expect(checksum(edited), service).toBe(checksum(objects));
    }
  });

  it("refuses a workflows key that is not <name>.yaml with a valid workflow name, and unknown workflows settings", () => {
    for (const key of ["review", "review.yml", "Review.yaml", "code__review.yaml", "-review.yaml"]) {
      expect(
        renderChartError(["--set-string", `workflows.definitions.${key.replaceAll(".", "\\.")}=kickoff: hi`]),
      ).toMatch(
        new RegExp(`workflows\\.definitions: key "${key.replaceAll(".", "\\.")}" must be a file name <name>\\.yaml`),
      );
    }
    expect(renderChartError(["--set-string", "workflows.definition.review\\.yaml=kickoff: hi"])).toMatch(
      /\/workflows.*'definition' not allowed/,
    );
  });

  it("runs NATS (one user per service from its config, JetStream) and Redis (default user off, ACL user, AOF) with generated passwords", async () => {
    const objects = renderChart();
    validateAll(objects, "helm template (defaults)");
    const secret = byKind(objects, "Secret")[0] as K8sObject;
    const natsPasswords = Object.fromEntries(
      NATS_USERS.map((user) => [user, secret.stringData?.[passwordVariable(user)] as string]),
    );
    const redisPassword = secret.stringData?.MONIRO_REDIS_PASSWORD as string;
    // Five passwords, each its own, each one NATS reads from its config (starting with a letter).
    for (const user of NATS_USERS) expect(natsPasswords[user], user).toMatch(/^[A-Za-z][A-Za-z0-9]{31}$/);
    expect(new Set(Object.values(natsPasswords)).size).toBe(NATS_USERS.length);
    expect(secret.stringData).not.toHaveProperty("MONIRO_NATS_PASSWORD");
    expect(redisPassword).toMatch(/^[A-Za-z][A-Za-z0-9]{31}$/);
    const nats = natsServer(objects);
    const redis = byKind(objects, "StatefulSet").find(
      (s) => s.metadata.labels?.["app.kubernetes.io/component"] === "redis",
    );
    if (!redis) throw new Error("no redis StatefulSet");
    // NATS: the config file mounted for -c asks every client to log in as one of the services' users,
    // with only its subjects (libs/bus nats-permissions); the passwords come from the Secret.
    const natsConf = natsConfOf(objects);
    expect(natsConf).toContain(natsAuthorization("moniro"));
    expect(natsConf).toBe(natsServerConfig("moniro", []));
    for (const user of NATS_USERS) {
      expect(natsConf).toContain(`user: "${user}", password: $${passwordVariable(user)}\n`);
    }
    expect(natsConf).toMatch(/jetstream \{\s*store_dir: "\/data"/);
    const natsContainer = containerOf(nats);
    expect(natsContainer.env.map((e: { name: string }) => e.name).sort()).toEqual(
      NATS_USERS.map(passwordVariable).sort(),
    );
    for (const user of NATS_USERS) {
      expect(secretRefOf(natsContainer, passwordVariable(user)), user).toEqual({
        name: "moniro-secrets",
        key: passwordVariable(user),
      });
    }
    expect(effectiveEnv(nats, objects)).toEqual(
      Object.fromEntries(NATS_USERS.map((user) => [passwordVariable(user), natsPasswords[user]])),
    );
    // Redis: AOF, no default user, one ACL user; the password only as its hash on the command line.
    const redisScript = containerOf(redis).command.join(" ");
    expect(redisScript).toMatch(/--appendonly yes/);
    expect(redisScript).toMatch(/--user default off/);
    expect(redisScript).toMatch(/--user moniro on "#\$\(printf %s "\$MONIRO_REDIS_PASSWORD" \| sha256sum/);
    expect(effectiveEnv(redis, objects).MONIRO_REDIS_PASSWORD).toBe(redisPassword);
    for (const server of [nats, redis]) {
      const pod = server.spec.template.spec;
      expect(pod.automountServiceAccountToken, server.metadata.name).toBe(false);
      expect(pod.securityContext.runAsNonRoot, server.metadata.name).toBe(true);
      expect(containerOf(server).securityContext.capabilities.drop, server.metadata.name).toEqual(["ALL"]);
      expect(containerOf(server).securityContext.readOnlyRootFilesystem, server.metadata.name).toBe(true);
    }
    // Each service logs in to NATS as its own user with its own password (its own Secret key,
    // not optional), to Redis with the one password (signal-bridge never talks to Redis).
    for (const service of SERVICES) {
      const deployment = deploymentOf(objects, service);
      const env = effectiveEnv(deployment, objects, IMAGE_ENV);
      expect(env.MONIRO_NATS_URL, service).toBe("nats://moniro-nats:4222");
      expect(env.MONIRO_REDIS_URL, service).toBe("redis://moniro-redis:6379");
      expect({ service, user: env.MONIRO_NATS_USER, pw: env.MONIRO_NATS_PASSWORD }).toEqual({
        service,
        user: service,
        pw: natsPasswords[service],
      });
      expect(envValue(containerOf(deployment), "MONIRO_NATS_USER"), service).toBe(service);
      expect(secretRefOf(containerOf(deployment), "MONIRO_NATS_PASSWORD"), service).toEqual({
        name: "moniro-secrets",
        key: passwordVariable(service),
      });
      expect({ service, redis: env.MONIRO_REDIS_PASSWORD }).toEqual({
        service,
        redis: service === "signal-bridge" ? undefined : redisPassword,
      });
      if (service !== "gateway") {
        expect({ service, error: await configErrorOf(service, env) }).toEqual({ service, error: undefined });
      }
    }
    // Not in the shared ConfigMap: there every service would get the same user.
    for (const configMap of byKind(objects, "ConfigMap")) {
      expect(configMap.data ?? {}, configMap.metadata.name).not.toHaveProperty("MONIRO_NATS_USER");
    }
  });

  it("gives the services' user on the release's Redis exactly redisAclRules(redis.prefix) and keeps the default user off", () => {
    // The default prefix, and one a shell would misread unquoted (a quote, $(…), a backtick, | ; &).
    for (const args of [[], ["-f", valuesFile("redis:\n  prefix: 'o''brien\"$(id)`|;&:'\n")]]) {
      const objects = renderChart(args);
      const password = (byKind(objects, "Secret")[0] as K8sObject).stringData?.MONIRO_REDIS_PASSWORD as string;
      const prefix = effectiveEnv(deploymentOf(objects, "gateway"), objects, IMAGE_ENV).MONIRO_REDIS_PREFIX as string;
      expect(prefix).toBe(args.length === 0 ? "moniro:" : `o'brien"$(id)\`|;&:`);
      // Every service that talks to Redis uses the prefix the ACL user is given.
      for (const service of SERVICES.filter((s) => s !== "signal-bridge")) {
        expect(effectiveEnv(deploymentOf(objects, service), objects, IMAGE_ENV).MONIRO_REDIS_PREFIX, service).toBe(
          prefix,
        );
      }
      const serverArgs = redisServerArgs(objects, password);
      expect(redisUsers(serverArgs)).toEqual({
        default: ["off", "~*", "&*", "+@all"],
        moniro: ["on", `#${sha256(password)}`, ...redisAclRules(prefix)],
      });
    }
    // A custom user name keeps the same rules.
    const renamed = renderChart(["--set", "redis.username=svc,redis.prefix=team-a.moniro:"]);
    const renamedPassword = (byKind(renamed, "Secret")[0] as K8sObject).stringData?.MONIRO_REDIS_PASSWORD as string;
    expect(redisUsers(redisServerArgs(renamed, renamedPassword))).toEqual({
      default: ["off", "~*", "&*", "+@all"],
      svc: ["on", `#${sha256(renamedPassword)}`, ...redisAclRules("team-a.moniro:")],
    });
  });

  it("refuses a redis.prefix that cannot be an ACL key pattern (as redisAclRules does), naming it, for the release's Redis only", () => {
    for (const prefix of ["", "a b", "a\tb", "moniro:\n", "a*", "a?", "a[x]", "a]", "a\\b", "a\u00a0b"]) {
      expect(() => redisAclRules(prefix), JSON.stringify(prefix)).toThrow(/cannot be an ACL key pattern/);
      const error = renderChartError(["-f", valuesFile(`redis:\n  prefix: ${JSON.stringify(prefix)}\n`)]);
      expect(error, JSON.stringify(prefix)).toMatch(
        /redis\.prefix .* cannot be an ACL key pattern of the release's Redis user/,
      );
      // Named as Go's %q writes it (JSON's escapes, for these; \u00a0 escaped too).
      expect(error, JSON.stringify(prefix)).toContain(
        `redis.prefix ${JSON.stringify(prefix).replace("\u00a0", "\\u00a0")} cannot`,
      );
    }
    // Your own Redis: its ACL is yours (docs/redis-keys.md), the chart renders the prefix as given.
    const own = renderChart([...PRODUCTION, "--set-string", "redis.prefix=app*"]);
    expect(byKind(own, "StatefulSet")).toEqual([]);
    expect(effectiveEnv(deploymentOf(own, "gateway"), own, IMAGE_ENV).MONIRO_REDIS_PREFIX).toBe("app*");
  });

  it("gives the release's NATS the permissions of subjectNamespace, and restarts it when they change", () => {
    const checksum = (all: K8sObject[]) => natsServer(all).spec.template.metadata.annotations["checksum/config"];
    const defaults = renderChart();
    // helm_namespace: the stream prefix HELM_NAMESPACE_ spells a placeholder of the chart's template.
    for (const namespace of ["team-a", "helm_namespace", "prod2"]) {
      const objects = renderChart(["--set", `subjectNamespace=${namespace}`]);
      validateAll(objects, `helm template --set subjectNamespace=${namespace}`);
      const natsConf = natsConfOf(objects);
      expect(natsConf, namespace).toContain(natsAuthorization(namespace));
      expect(natsConf, namespace).toBe(natsServerConfig(namespace, []));
      expect(checksum(objects), namespace).not.toBe(checksum(defaults));
      for (const service of SERVICES) {
        expect(effectiveEnv(deploymentOf(objects, service), objects).MONIRO_NAMESPACE, service).toBe(namespace);
      }
    }
    expect(natsAuthorization("team-a")).toContain('"$JS.API.STREAM.INFO.TEAM_A_MONIRO_IN"');
    expect(natsConfOf(renderChart(["--set", "subjectNamespace=team-a"]))).toContain('"team-a.in.*"');
    // The same values, the same config: no restart on an upgrade that changes nothing of it.
    expect(checksum(renderChart())).toBe(checksum(defaults));
    expect(checksum(renderChart(["--set", "services.gateway.replicas=3"]))).toBe(checksum(defaults));
    // A disabled service keeps its NATS user (the config names all five), and its password.
    const noBridge = renderChart(["--set", "services.signal-bridge.enabled=false"]);
    expect(natsConfOf(noBridge)).toBe(natsServerConfig("moniro", []));
    expect(effectiveEnv(natsServer(noBridge), noBridge)).toHaveProperty(passwordVariable("signal-bridge"));
    expect(danglingReferences(noBridge)).toEqual([]);
  });

  it("takes given passwords, and refuses NATS passwords its config cannot read, shares or ignores, or a URL that contradicts deploy", () => {
    const objects = renderChart([
      "--set",
      "secrets.natsPasswords.agent-runner=runner_Password-0123,secrets.redisPassword=any pass word!",
    ]);
    const secret = byKind(objects, "Secret")[0] as K8sObject;
    expect(secret.stringData?.MONIRO_NATS_PASSWORD_AGENT_RUNNER).toBe("runner_Password-0123");
    expect(effectiveEnv(deploymentOf(objects, "agent-runner"), objects).MONIRO_NATS_PASSWORD).toBe(
      "runner_Password-0123",
    );
    // The others are still generated.
    expect(secret.stringData?.MONIRO_NATS_PASSWORD_GATEWAY).toMatch(/^[A-Za-z][A-Za-z0-9]{31}$/);
    expect(secret.stringData?.MONIRO_REDIS_PASSWORD).toBe("any pass word!");
    expect(renderChartError(["--set", "secrets.natsPasswords.scheduler=12345678901234567890"])).toMatch(
      /secrets\.natsPasswords\.scheduler must be at least 16 letters, digits, '-' or '_', starting with a letter/,
    );
    expect(renderChartError(["--set", "secrets.natsPasswords.gateway=short"])).toMatch(
      /secrets\.natsPasswords\.gateway/,
    );
    expect(
      renderChartError([
        "--set",
        "secrets.natsPasswords.gateway=same_Password_0123,secrets.natsPasswords.signal-bridge=same_Password_0123",
      ]),
    ).toMatch(/secrets\.natsPasswords\.gateway and secrets\.natsPasswords\.signal-bridge are the same/);
    expect(renderChartError(["--set", "secrets.natsPasswords.gatewy=gateway_Password_0123"])).toMatch(/gatewy/);
    // The one password of nats.user is for your own NATS: the release's has no such user.
    expect(renderChartError(["--set", "secrets.natsPassword=nats_Password_0123"])).toMatch(
      /secrets\.natsPassword is for your own NATS \(nats\.deploy=false\)/,
    );
    expect(renderChartError(["--set", "secrets.natsToken=some_Token_0123456789"])).toMatch(
      /secrets\.natsToken is for your own NATS \(nats\.deploy=false\)/,
    );
    expect(renderChartError(["--set", "nats.url=nats://elsewhere:4222"])).toMatch(/set nats\.deploy=false/);
    expect(renderChartError(["--set", "redis.deploy=false"])).toMatch(
      /redis\.url is required when redis\.deploy is false/,
    );
    // Your own servers: no StatefulSet, nothing generated.
    const own = renderChart(PRODUCTION);
    expect(byKind(own, "StatefulSet")).toEqual([]);
    expect((byKind(own, "Secret")[0] as K8sObject).stringData?.MONIRO_NATS_PASSWORD).toBe("");
  });

  it("with your own NATS (nats.deploy=false), every service logs in as nats.user with secrets.natsPassword, or a token", () => {
    const objects = renderChart([...PRODUCTION, "--set", "secrets.natsPassword=any nats pass!"]);
    validateAll(objects, "helm template (own NATS)");
    expect(danglingReferences(objects)).toEqual([]);
    expect(byKind(objects, "ConfigMap").map((c) => c.metadata.name)).not.toContain("moniro-nats-config");
    const secret = byKind(objects, "Secret")[0] as K8sObject;
    expect(secret.stringData?.MONIRO_NATS_PASSWORD).toBe("any nats pass!");
    expect(Object.keys(secret.stringData ?? {}).filter((key) => key.startsWith("MONIRO_NATS_PASSWORD_"))).toEqual([]);
    const config = byKind(objects, "ConfigMap").find((c) => c.metadata.name === "moniro-config");
    expect(config?.data?.MONIRO_NATS_USER).toBe("moniro");
    for (const service of SERVICES) {
      const container = containerOf(deploymentOf(objects, service));
      expect(envValue(container, "MONIRO_NATS_USER"), service).toBeUndefined();
      expect(secretRefOf(container, "MONIRO_NATS_PASSWORD"), service).toEqual({
        name: "moniro-secrets",
        key: "MONIRO_NATS_PASSWORD",
        optional: true,
      });
      const env = effectiveEnv(deploymentOf(objects, service), objects);
      expect({ service, user: env.MONIRO_NATS_USER, pw: env.MONIRO_NATS_PASSWORD }).toEqual({
        service,
        user: "moniro",
        pw: "any nats pass!",
      });
    }
    // Another user; or none (a token, or a NATS without users): no user, no password.
    const other = renderChart([...PRODUCTION, "--set", "nats.user=ops"]);
    for (const service of SERVICES) {
      expect(effectiveEnv(deploymentOf(other, service), other).MONIRO_NATS_USER, service).toBe("ops");
    }
    const token = renderChart([...PRODUCTION, "--set", "nats.user=,secrets.natsToken=nats-token-0123"]);
    for (const service of SERVICES) {
      const env = effectiveEnv(deploymentOf(token, service), token);
      expect({
        service,
        user: env.MONIRO_NATS_USER,
        pw: env.MONIRO_NATS_PASSWORD,
        token: env.MONIRO_NATS_TOKEN,
      }).toEqual({
        service,
        user: undefined,
        pw: undefined,
        token: "nats-token-0123",
      });
    }
    // values.yaml says where least privilege for your NATS comes from.
    expect(readText(`${CHART}/values.yaml`)).toContain("docs/examples/nats-authorization.conf");
  });

  it("lets the tool-executor's pod run bubblewrap, without a service-account token, and keeps every other pod restricted", () => {
    const objects = renderChart();
    for (const service of SERVICES) {
      const deployment = deploymentOf(objects, service);
      const pod = deployment.spec.template.spec;
      const security = containerOf(deployment).securityContext;
      expect(pod.automountServiceAccountToken, service).toBe(false);
      expect(security.allowPrivilegeEscalation, service).toBe(false);
      expect(security.readOnlyRootFilesystem, service).toBe(true);
      expect(security.capabilities, service).toEqual({ drop: ["ALL"] });
      expect(security.privileged, service).toBeUndefined();
      if (service === "tool-executor") {
        // A user namespace of its own (required for an unmasked /proc), no seccomp/AppArmor filter.
        expect(pod.hostUsers).toBe(false);
        expect(security.procMount).toBe("Unmasked");
        expect(security.seccompProfile).toEqual({ type: "Unconfined" });
        expect(security.appArmorProfile).toEqual({ type: "Unconfined" });
      } else {
        expect(pod.hostUsers, service).toBeUndefined();
        expect(security.procMount, service).toBeUndefined();
        expect(security.seccompProfile, service).toEqual({ type: "RuntimeDefault" });
      }
      expect(effectiveEnv(deployment, objects), service).not.toHaveProperty("MONIRO_EXEC_UNSAFE_NO_SANDBOX");
    }
    const rendered = run(tool("helm"), ["template", "moniro", CHART, ...PRODUCTION]);
    expect(rendered).not.toContain("MONIRO_EXEC_UNSAFE_NO_SANDBOX");
    expect(readText(`${CHART}/values.yaml`)).not.toContain("MONIRO_EXEC_UNSAFE_NO_SANDBOX");
  });

  it("names objects after the release, so two releases in one namespace do not collide", () => {
    const a = renderChart([], "alpha").map((o) => `${o.kind}/${o.metadata.name}`);
    const b = renderChart([], "beta").map((o) => `${o.kind}/${o.metadata.name}`);
    expect(a.filter((name) => b.includes(name))).toEqual([]);
  });
});
