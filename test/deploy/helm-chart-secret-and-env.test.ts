// Two guards of the Helm chart (deploy/helm/moniro), checked with `helm template`:
// a changed value of the chart's Secret rolls every pod that reads it (a
// `checksum/secret` annotation), and services.<name>.env cannot replace a
// variable the chart derives for its logins and isolation (the render fails,
// naming the value path and the chart value to set instead).
import { NATS_USERS, passwordVariable } from "@moniro/bus";
import { describe, expect, it } from "vitest";
import {
  byKind,
  CHART,
  containerOf,
  deploymentOf,
  effectiveEnv,
  envNamesOf,
  type K8sObject,
  readText,
  renderChart,
  renderChartError,
  SERVICES,
} from "./manifests.js";

/** Every value of the chart's Secret given, so that two renders with the same values render the same Secret. */
const GIVEN: Record<string, string> = {
  ...Object.fromEntries(
    NATS_USERS.map((user) => [`secrets.natsPasswords.${user}`, `nats${user.replace("-", "")}Pw0123456789`]),
  ),
  "secrets.redisPassword": "redis-password-0123",
  "secrets.anthropicApiKey": "sk-ant-0123",
  "secrets.gatewayApiKeys": "gw-key-0123",
  "webhooks.secrets.GITHUB_WEBHOOK_SECRET": "hook-secret-0123456789",
};

function renderWith(overrides: Record<string, string> = {}, args: string[] = []): K8sObject[] {
  const values = { ...GIVEN, ...overrides };
  return renderChart([
    ...Object.entries(values).flatMap(([key, value]) => ["--set-string", `${key}=${value}`]),
    ...args,
  ]);
}

/** The Deployments and StatefulSets whose pods read Secret `secret` (secretKeyRef or envFrom), by name. */
function readersOf(objects: K8sObject[], secret: string): string[] {
  return [...byKind(objects, "Deployment"), ...byKind(objects, "StatefulSet")]
    .filter((workload) =>
      workload.spec.template.spec.containers.some(
        (container: {
          env?: Array<{ valueFrom?: { secretKeyRef?: { name: string } } }>;
          envFrom?: Array<{ secretRef?: { name: string } }>;
        }) =>
          (container.env ?? []).some((e) => e.valueFrom?.secretKeyRef?.name === secret) ||
          (container.envFrom ?? []).some((e) => e.secretRef?.name === secret),
      ),
    )
    .map((workload) => workload.metadata.name)
    .sort();
}

/** Each workload's `checksum/secret` pod annotation, by name (undefined where it has none). */
function secretChecksums(objects: K8sObject[]): Record<string, string | undefined> {
  return Object.fromEntries(
    [...byKind(objects, "Deployment"), ...byKind(objects, "StatefulSet")].map((workload) => [
      workload.metadata.name,
      workload.spec.template.metadata.annotations?.["checksum/secret"],
    ]),
  );
}

const WITH_SIGNAL_CLI = ["--set", "signalCli.enabled=true", "--set-string", "signalCli.account=+15551234567"];

describe("helm chart: a changed Secret rolls the pods that read it", () => {
  it("gives every pod that reads the chart's Secret a checksum of it, the same for the same values", () => {
    const objects = renderWith({}, WITH_SIGNAL_CLI);
    const readers = readersOf(objects, "moniro-secrets");
    // The five services and the release's NATS and Redis; signal-cli reads no Secret.
    expect(readers).toEqual([...SERVICES.map((s) => `moniro-${s}`), "moniro-nats", "moniro-redis"].sort());
    const checksums = secretChecksums(objects);
    for (const name of readers) expect(checksums[name], name).toMatch(/^[0-9a-f]{64}$/);
    expect(checksums["moniro-signal-cli"]).toBeUndefined();
    // The same values render the same checksums: an upgrade that changes no secret restarts nothing.
    expect(secretChecksums(renderWith({}, WITH_SIGNAL_CLI))).toEqual(checksums);
  });

  it("changes every reader's checksum when a password or key of the Secret changes", () => {
    const base = secretChecksums(renderWith());
    const readers = readersOf(renderWith(), "moniro-secrets");
    for (const key of [
      "secrets.redisPassword",
      `secrets.natsPasswords.${NATS_USERS[1]}`,
      "secrets.anthropicApiKey",
      "secrets.gatewayApiKeys",
    ]) {
      const changed = secretChecksums(renderWith({ [key]: `${GIVEN[key]}changed` }));
      for (const name of readers) expect(changed[name], `${key}: ${name}`).not.toBe(base[name]);
    }
  });

  it("rolls the gateway, and only it, when a webhook secret changes", () => {
    const base = secretChecksums(renderWith());
    expect(readersOf(renderWith(), "moniro-webhooks")).toEqual(["moniro-gateway"]);
    const changed = secretChecksums(
      renderWith({ "webhooks.secrets.GITHUB_WEBHOOK_SECRET": "another-hook-secret-0123" }),
    );
    for (const [name, checksum] of Object.entries(changed)) {
      if (name === "moniro-gateway") expect(checksum, name).not.toBe(base[name]);
      else expect(checksum, name).toBe(base[name]);
    }
  });

  it("sums the generated passwords the Secret is given, so the first upgrade after an install rolls nothing", () => {
    // At install the chart generates the passwords left empty; at an upgrade it keeps them (lookup),
    // which renders exactly as giving them.
    const installed = renderChart(["--set-string", "secrets.gatewayApiKeys=gw-key-0123"]);
    const secret = byKind(installed, "Secret").find((s) => s.metadata.name === "moniro-secrets");
    const kept = NATS_USERS.map(
      (user) => `secrets.natsPasswords.${user}=${secret?.stringData?.[passwordVariable(user)]}`,
    );
    const upgraded = renderChart([
      "--set-string",
      "secrets.gatewayApiKeys=gw-key-0123",
      "--set-string",
      `secrets.redisPassword=${secret?.stringData?.MONIRO_REDIS_PASSWORD}`,
      ...kept.flatMap((value) => ["--set-string", value]),
    ]);
    const checksums = secretChecksums(installed);
    for (const name of readersOf(installed, "moniro-secrets")) expect(checksums[name], name).toMatch(/^[0-9a-f]{64}$/);
    expect(secretChecksums(upgraded)).toEqual(checksums);
  });

  it("puts no checksum on the pods when the Secret is yours, and says a rollout restart is then yours too", () => {
    const objects = renderChart(["--set", "secrets.create=false,secrets.existingSecret=my-moniro-keys"]);
    expect(readersOf(objects, "my-moniro-keys")).toHaveLength(SERVICES.length + 2);
    expect(Object.values(secretChecksums(objects)).filter(Boolean)).toEqual([]);
    for (const text of [readText(`${CHART}/values.yaml`), readText("docs/deployment.md")]) {
      expect(text).toMatch(/existingSecret[\s\S]*kubectl -n \S+ rollout restart deployment/);
    }
  });
});

/**
 * The variables services.<name>.env must not set, and the chart value the refusal names instead.
 * Each is one the chart sets itself (in its ConfigMap or the container's env), from that value.
 */
const DERIVED: Record<string, string> = {
  MONIRO_NATS_URL: "nats.url",
  MONIRO_NATS_USER: "nats.user",
  MONIRO_NATS_PASSWORD: "secrets.natsPasswords.<name>",
  MONIRO_NATS_TOKEN: "secrets.natsToken",
  MONIRO_REDIS_URL: "redis.url",
  MONIRO_REDIS_USERNAME: "redis.username",
  MONIRO_REDIS_PASSWORD: "secrets.redisPassword",
  MONIRO_REDIS_PREFIX: "redis.prefix",
  MONIRO_NAMESPACE: "subjectNamespace",
  MONIRO_API_KEYS: "secrets.gatewayApiKeys",
  ANTHROPIC_API_KEY: "secrets.anthropicApiKey",
  MONIRO_HTTP_PORT: "services.<name>.port",
};

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

describe("helm chart: services.<name>.env cannot replace what the chart derives", () => {
  it("refuses MONIRO_REDIS_PREFIX in a service's env, naming the value path, why, and redis.prefix", () => {
    // A later entry of the same name wins in Kubernetes, and env wins over the ConfigMap: unrefused,
    // this service's keys would lie outside the `~<prefix>*` the release's Redis user is limited to.
    const error = renderChartError(["--set-string", "services.agent-runner.env.MONIRO_REDIS_PREFIX=other:"]);
    expect(error).toContain("services.agent-runner.env.MONIRO_REDIS_PREFIX");
    expect(error).toMatch(/ACL/);
    expect(error).toMatch(/set redis\.prefix instead/);
  });

  it("refuses every variable the chart derives for logins, isolation and secrets, naming the value to set", () => {
    Object.entries(DERIVED).forEach(([variable, value], i) => {
      const service = SERVICES[i % SERVICES.length] as string;
      const error = renderChartError(["--set-string", `services.${service}.env.${variable}=x`]);
      expect(error, variable).toContain(`services.${service}.env.${variable}:`);
      expect(error, variable).toMatch(new RegExp(`set ${escapeRegExp(value.replace("<name>", service))}\\b`));
    });
  });

  it("refuses only variables the chart does set (the list is not stale)", () => {
    const renders = [
      renderChart(),
      renderChart([
        "--set",
        "nats.deploy=false,nats.url=nats://nats:4222,nats.user=moniro,secrets.natsPassword=pw",
        "--set",
        "redis.deploy=false,redis.url=redis://redis:6379",
      ]),
    ];
    const set = new Set(
      renders.flatMap((objects) => SERVICES.flatMap((service) => envNamesOf(deploymentOf(objects, service), objects))),
    );
    expect(Object.keys(DERIVED).filter((variable) => !set.has(variable))).toEqual([]);
  });

  it("still renders other variables of services.<name>.env into that service's environment", () => {
    const objects = renderChart([
      "--set-string",
      "services.signal-bridge.env.MONIRO_SIGNAL_DEFAULT_AGENT=alice,services.gateway.env.MONIRO_LOG_LEVEL=debug",
    ]);
    expect(effectiveEnv(deploymentOf(objects, "signal-bridge"), objects).MONIRO_SIGNAL_DEFAULT_AGENT).toBe("alice");
    expect(effectiveEnv(deploymentOf(objects, "gateway"), objects).MONIRO_LOG_LEVEL).toBe("debug");
    expect(effectiveEnv(deploymentOf(objects, "scheduler"), objects).MONIRO_LOG_LEVEL).toBe("info");
    // A disabled service's env renders nowhere, so it is not checked.
    expect(() =>
      renderChart([
        "--set",
        "services.scheduler.enabled=false",
        "--set-string",
        "services.scheduler.env.MONIRO_REDIS_PREFIX=x",
      ]),
    ).not.toThrow();
  });

  it("lets no webhook secret shadow the chart's ConfigMap in the gateway: the ConfigMap comes last in envFrom", () => {
    // Listed in the values, a key that is a setting is refused (helm-chart.test.ts); a Secret you manage is
    // not read at render, so of two envFrom sources with one key the later one, the ConfigMap, wins.
    expect(renderChartError(["--set-string", "webhooks.secrets.MONIRO_REDIS_PREFIX=other-prefix-0123456"])).toContain(
      "webhooks.secrets.MONIRO_REDIS_PREFIX: MONIRO_REDIS_PREFIX is one of the services' own settings",
    );
    const objects = renderChart(["--set-string", "webhooks.existingSecret=my-hook-secrets"]);
    const sources = containerOf(deploymentOf(objects, "gateway")).envFrom as Array<Record<string, { name: string }>>;
    expect(sources.map((source) => Object.keys(source)[0])).toEqual(["secretRef", "configMapRef"]);
    expect(sources.at(-1)?.configMapRef?.name).toBe("moniro-config");
  });
});
