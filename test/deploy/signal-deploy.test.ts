// signal-cli beside the signal-bridge, checked offline: docker-compose.yml as
// `docker-compose config` (v1, no engine) resolves it with the `signal`
// profile, and the Helm chart's `signalCli` values as `helm template`
// renders them, each object validated against the Kubernetes schema. The
// bridge's environment goes through its own config loader and routing.
// Not checked here: pulling and running the signal-cli image.

import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { NATS_USERS, passwordVariable } from "@moniro/bus/nats-permissions";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { resolveRouting } from "../../services/signal-bridge/src/routing.js";
import { loadSignalBridgeConfig } from "../../services/signal-bridge/src/signal-config.js";
import { tempDir } from "../support/temp-dir.js";
import {
  byKind,
  containerOf,
  envValue,
  type K8sObject,
  parseManifests,
  ROOT,
  run,
  tool,
  validateObject,
} from "./manifests.js";

const ACCOUNT = "+15550001";

interface ComposeFile {
  services: Record<
    string,
    {
      image?: string;
      command?: string[];
      profiles?: string[];
      volumes?: string[];
      environment?: Record<string, string>;
    }
  >;
  volumes?: Record<string, unknown>;
}

function composeConfig(env: Record<string, string>, profile?: string): ComposeFile {
  const dir = tempDir("moniro-signal-compose-");
  const envFile = join(dir, "signal.env");
  writeFileSync(
    envFile,
    Object.entries({
      ...Object.fromEntries(NATS_USERS.map((user) => [passwordVariable(user), "pn"])),
      MONIRO_REDIS_PASSWORD: "pr",
      ...env,
    })
      .map(([k, v]) => `${k}=${v}\n`)
      .join(""),
  );
  const binary = run("sh", ["-c", "command -v docker-compose || true"]).trim();
  if (!binary) throw new Error("docker-compose is not installed: run 'bash .ci/tools.sh'");
  const args = [
    "--env-file",
    envFile,
    "-f",
    join(ROOT, "docker-compose.yml"),
    ...(profile ? ["--profile", profile] : []),
  ];
  return parse(run(binary, [...args, "config"])) as ComposeFile;
}

function render(args: string[]): K8sObject[] {
  const output = run(tool("helm"), ["template", "moniro", "deploy/helm/moniro", "--namespace", "moniro", ...args]);
  return parseManifests(output, `helm template ${args.join(" ")}`);
}

const bridgeDeployment = (objects: K8sObject[]) =>
  byKind(objects, "Deployment").find((d) => d.metadata.labels?.["app.kubernetes.io/component"] === "signal-bridge");

describe("signal-cli next to the signal-bridge", () => {
  it("compose: a signal-cli service in the `signal` profile, its data on a named volume, reachable by the bridge", () => {
    const withoutProfile = composeConfig({});
    expect(withoutProfile.services["signal-cli"]?.profiles).toEqual(["signal"]);

    const env = {
      MONIRO_SIGNAL_URL: "http://signal-cli:8080",
      MONIRO_SIGNAL_ACCOUNT: ACCOUNT,
      MONIRO_SIGNAL_DEFAULT_AGENT: "alice",
    };
    const file = composeConfig(env, "signal");
    const signalCli = file.services["signal-cli"];
    expect(signalCli?.image).toMatch(/^ghcr\.io\/asamk\/signal-cli:/);
    const command = signalCli?.command ?? [];
    const configDir = command[command.indexOf("--config") + 1];
    expect(command.slice(command.indexOf("-a"))).toEqual([
      "-a",
      ACCOUNT,
      "daemon",
      "--http",
      "0.0.0.0:8080",
      "--receive-mode",
      "on-connection",
    ]);
    const dataMount = signalCli?.volumes?.find((v) => v.split(":")[1] === configDir);
    expect(dataMount).toBeDefined();
    expect(Object.keys(file.volumes ?? {})).toContain(dataMount?.split(":")[0]);

    const bridgeEnv = file.services["signal-bridge"]?.environment ?? {};
    expect(new URL(bridgeEnv.MONIRO_SIGNAL_URL ?? "").port).toBe("8080");
    const config = loadSignalBridgeConfig(bridgeEnv);
    expect(config.MONIRO_SIGNAL_ACCOUNT).toBe(ACCOUNT);
    expect(resolveRouting(config).defaultAgent).toBe("alice");
  });

  it("helm: off by default; nothing of signal-cli is rendered", () => {
    const objects = render([]);
    expect(objects.filter((o) => o.metadata.name.includes("signal-cli"))).toEqual([]);
    expect(envValue(containerOf(bridgeDeployment(objects) as K8sObject), "MONIRO_SIGNAL_URL")).toBe("");
  });

  it("helm: on, a Deployment (one replica, Recreate), a Service and a kept PVC, and the bridge pointed at them", () => {
    const objects = render([
      "--set",
      "signalCli.enabled=true",
      "--set-string",
      `signalCli.account=${ACCOUNT}`,
      "--set-string",
      "services.signal-bridge.env.MONIRO_SIGNAL_DEFAULT_AGENT=alice",
    ]);
    for (const object of objects) validateObject(object, "helm template signalCli.enabled=true");
    const deployment = byKind(objects, "Deployment").find((d) => d.metadata.name === "moniro-signal-cli") as K8sObject;
    expect(deployment).toBeDefined();
    const spec = deployment.spec as { replicas: number; strategy: { type: string } };
    expect(spec.replicas).toBe(1);
    expect(spec.strategy.type).toBe("Recreate");
    const container = containerOf(deployment);
    const args = container.args as string[];
    expect(args).toEqual(
      expect.arrayContaining(["-a", ACCOUNT, "daemon", "--http", "0.0.0.0:8080", "--receive-mode", "on-connection"]),
    );
    const configDir = args[args.indexOf("--config") + 1];
    const mount = (container.volumeMounts as { name: string; mountPath: string }[]).find(
      (m) => m.mountPath === configDir,
    );
    const podVolumes = (
      deployment.spec as {
        template: { spec: { volumes: { name: string; persistentVolumeClaim?: { claimName: string } }[] } };
      }
    ).template.spec.volumes;
    const claim = podVolumes.find((v) => v.name === mount?.name)?.persistentVolumeClaim?.claimName;
    const pvc = byKind(objects, "PersistentVolumeClaim").find((p) => p.metadata.name === claim);
    expect((pvc?.metadata as { annotations?: Record<string, string> })?.annotations?.["helm.sh/resource-policy"]).toBe(
      "keep",
    );

    const service = byKind(objects, "Service").find((s) => s.metadata.name === "moniro-signal-cli");
    const port = (service?.spec as { ports: { port: number }[] } | undefined)?.ports[0]?.port;
    const bridge = containerOf(bridgeDeployment(objects) as K8sObject);
    expect(envValue(bridge, "MONIRO_SIGNAL_URL")).toBe(`http://moniro-signal-cli:${port}`);
    const env = Object.fromEntries(
      (bridge.env as { name: string; value?: string }[])
        .filter((e) => e.value !== undefined)
        .map((e) => [e.name, e.value as string]),
    );
    const config = loadSignalBridgeConfig(env);
    expect(config.MONIRO_SIGNAL_ACCOUNT).toBe(ACCOUNT);
    expect(resolveRouting(config).defaultAgent).toBe("alice");
  });

  it("helm: refuses signal-cli without its account, naming the value; signalUrl still wins", () => {
    let error = "";
    try {
      render(["--set", "signalCli.enabled=true"]);
    } catch (e) {
      error = (e as Error).message;
    }
    expect(error).toContain("signalCli.account: set the Signal account (+E.164");
    const objects = render([
      "--set",
      "signalCli.enabled=true",
      "--set-string",
      `signalCli.account=${ACCOUNT}`,
      "--set",
      "services.signal-bridge.signalUrl=http://elsewhere:8080",
    ]);
    expect(envValue(containerOf(bridgeDeployment(objects) as K8sObject), "MONIRO_SIGNAL_URL")).toBe(
      "http://elsewhere:8080",
    );
  });
});
