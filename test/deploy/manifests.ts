import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { SERVICE_EXTRA_NODE_FLAGS } from "@moniro/config/service";
import { Deployment, StatefulSet } from "kubernetes-models/apps/v1";
import { HorizontalPodAutoscaler } from "kubernetes-models/autoscaling/v2";
import { ConfigMap, Namespace, PersistentVolumeClaim, Secret, Service, ServiceAccount } from "kubernetes-models/v1";
import { parseAllDocuments } from "yaml";
import { freePort } from "../support/ports.js";
import { privateRedis } from "../support/private-servers.js";

export const ROOT = resolve(import.meta.dirname, "..", "..");
export const SERVICES = ["gateway", "agent-runner", "tool-executor", "scheduler", "signal-bridge"] as const;

export interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  // biome-ignore lint/suspicious/noExplicitAny: rendered manifests are inspected field by field in the tests
  spec?: any;
  data?: Record<string, string>;
  stringData?: Record<string, string>;
}

/** A kubernetes-models class per kind the artefacts may contain; anything else is an error. */
const MODELS: Record<string, new (data: never) => { validate(): void }> = {
  "v1/Namespace": Namespace,
  "v1/ConfigMap": ConfigMap,
  "v1/Secret": Secret,
  "v1/Service": Service,
  "v1/ServiceAccount": ServiceAccount,
  "v1/PersistentVolumeClaim": PersistentVolumeClaim,
  "apps/v1/Deployment": Deployment,
  "apps/v1/StatefulSet": StatefulSet,
  "autoscaling/v2/HorizontalPodAutoscaler": HorizontalPodAutoscaler,
};

/** Parses multi-document YAML strictly (duplicate keys and syntax errors throw). */
export function parseManifests(text: string, source: string): K8sObject[] {
  const objects: K8sObject[] = [];
  for (const document of parseAllDocuments(text, { uniqueKeys: true })) {
    if (document.errors.length > 0) throw new Error(`${source}: ${document.errors.map((e) => e.message).join("; ")}`);
    const value = document.toJS() as K8sObject | null;
    if (value !== null) objects.push(value);
  }
  return objects;
}

/** Validates one object against the Kubernetes OpenAPI schema; throws naming the object and the field. */
export function validateObject(object: K8sObject, source: string): void {
  const key = `${object.apiVersion}/${object.kind}`;
  const Model = MODELS[key];
  if (!Model) throw new Error(`${source}: no schema known for ${key} (${object.metadata?.name})`);
  try {
    new Model(object as never).validate();
  } catch (error) {
    throw new Error(`${source}: ${key} ${object.metadata?.name} is invalid: ${(error as Error).message}`);
  }
}

export function byKind(objects: K8sObject[], kind: string): K8sObject[] {
  return objects.filter((o) => o.kind === kind);
}

/** How every artefact starts a service: node, the service's own flags (SERVICE_EXTRA_NODE_FLAGS), its bundle. */
export function serviceCommand(service: string): string[] {
  return ["node", ...(SERVICE_EXTRA_NODE_FLAGS[service] ?? []), `services/${service}/dist/main.js`];
}

/** The command's entry file exists as TypeScript source (dist/ is its compiled form). */
export function entrySourceExists(command: string[]): boolean {
  const file = command.find((part) => /^services\/[a-z-]+\/dist\/main\.js$/.test(part));
  if (!file) return false;
  return existsSync(join(ROOT, file.replace("/dist/", "/src/").replace(/\.js$/, ".ts")));
}

const TOOLS = join(ROOT, "tools");

/** A tool from ./tools (installed by .ci/tools.sh) or PATH; a clear failure when missing. */
export function tool(name: "helm" | "kubectl"): string {
  const local = join(TOOLS, name);
  if (existsSync(local)) return local;
  const found = spawnSync("sh", ["-c", `command -v ${name}`], { encoding: "utf8" });
  if (found.status === 0 && found.stdout.trim()) return found.stdout.trim();
  throw new Error(`${name} is not installed: run 'bash .ci/tools.sh' (installs helm and kubectl into ./tools/)`);
}

export function run(command: string, args: string[]): string {
  try {
    return execFileSync(command, args, { cwd: ROOT, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
  } catch (error) {
    const failure = error as { stdout?: string; stderr?: string; message: string };
    throw new Error(
      `${command} ${args.join(" ")} failed:\n${failure.stdout ?? ""}${failure.stderr ?? failure.message}`,
    );
  }
}

export function readText(path: string): string {
  return readFileSync(join(ROOT, path), "utf8");
}

/** The single container of a Deployment. */
// biome-ignore lint/suspicious/noExplicitAny: see K8sObject.spec
export function containerOf(deployment: K8sObject): any {
  const containers = deployment.spec?.template?.spec?.containers ?? [];
  if (containers.length !== 1) throw new Error(`${deployment.metadata.name}: expected one container`);
  return containers[0];
}

export function envValue(container: { env?: Array<{ name: string; value?: string }> }, name: string) {
  return container.env?.find((e) => e.name === name)?.value;
}

/**
 * Every ConfigMap, Secret (and key) and PersistentVolumeClaim a Deployment
 * refers to is among `objects`, unless named in `external` (managed outside).
 * Returns one line per dangling reference.
 */
export function danglingReferences(objects: K8sObject[], external: string[] = []): string[] {
  const names = (kind: string) => new Set(byKind(objects, kind).map((o) => o.metadata.name));
  const configMaps = names("ConfigMap");
  const claims = names("PersistentVolumeClaim");
  const secrets = new Map(
    byKind(objects, "Secret").map((s) => [s.metadata.name, new Set(Object.keys({ ...s.data, ...s.stringData }))]),
  );
  const problems: string[] = [];
  const workloads = [...byKind(objects, "Deployment"), ...byKind(objects, "StatefulSet")];
  for (const deployment of workloads) {
    const where = `${deployment.kind} ${deployment.metadata.name}`;
    const pod = deployment.spec.template.spec;
    for (const container of pod.containers) {
      for (const source of container.envFrom ?? []) {
        const name = source.configMapRef?.name;
        if (name && !configMaps.has(name) && !external.includes(name)) problems.push(`${where}: ConfigMap ${name}`);
      }
      for (const variable of container.env ?? []) {
        const ref = variable.valueFrom?.secretKeyRef;
        if (!ref || external.includes(ref.name)) continue;
        if (!secrets.get(ref.name)?.has(ref.key)) problems.push(`${where}: Secret ${ref.name} key ${ref.key}`);
      }
    }
    for (const volume of pod.volumes ?? []) {
      const configMap = volume.configMap?.name;
      if (configMap && !configMaps.has(configMap) && !external.includes(configMap)) {
        problems.push(`${where}: ConfigMap ${configMap}`);
      }
      const claim = volume.persistentVolumeClaim?.claimName;
      if (claim && !claims.has(claim) && !external.includes(claim)) problems.push(`${where}: PVC ${claim}`);
    }
  }
  for (const service of byKind(objects, "Service")) {
    const selector = service.spec.selector as Record<string, string>;
    const matches = workloads.some((d) =>
      Object.entries(selector).every(([k, v]) => d.spec.template.metadata.labels?.[k] === v),
    );
    if (!matches) problems.push(`Service ${service.metadata.name}: selects no Deployment or StatefulSet`);
  }
  for (const hpa of byKind(objects, "HorizontalPodAutoscaler")) {
    const target = hpa.spec.scaleTargetRef.name;
    if (!byKind(objects, "Deployment").some((d) => d.metadata.name === target)) {
      problems.push(`HPA ${hpa.metadata.name}: no Deployment ${target}`);
    }
  }
  return problems;
}

/** What every service container must look like, whichever artefact renders it. */
export function serviceContainerProblems(deployment: K8sObject, service: string): string[] {
  const container = containerOf(deployment);
  const problems: string[] = [];
  const where = `Deployment ${deployment.metadata.name}`;
  // `args` (the image's CMD), never `command`: that would replace the ENTRYPOINT, tini, which reaps orphans.
  if (container.command !== undefined) problems.push(`${where}: sets command (replaces tini); use args`);
  const command: string[] = container.args ?? [];
  if (command.join(" ") !== serviceCommand(service).join(" ")) problems.push(`${where}: args ${command}`);
  if (!entrySourceExists(command)) problems.push(`${where}: services/${service}/src/main.ts does not exist`);
  const port = Number(envValue(container, "MONIRO_HTTP_PORT"));
  const http = (container.ports ?? []).find((p: { name?: string }) => p.name === "http");
  if (!http || http.containerPort !== port) problems.push(`${where}: port 'http' is not MONIRO_HTTP_PORT (${port})`);
  if (container.livenessProbe?.httpGet?.path !== "/healthz") problems.push(`${where}: liveness probe is not /healthz`);
  if (container.readinessProbe?.httpGet?.path !== "/readyz") problems.push(`${where}: readiness probe is not /readyz`);
  for (const probe of [container.livenessProbe, container.readinessProbe]) {
    if (probe?.httpGet?.port !== "http") problems.push(`${where}: a probe does not use port 'http'`);
  }
  if (!container.resources?.requests) problems.push(`${where}: no resource requests`);
  return problems;
}

/**
 * The environment the container of `deployment` starts with: `base` (the
 * image's ENV), then its ConfigMaps (envFrom), then its env entries, with
 * secretKeyRef values read from the Secrets among `objects` (a missing
 * optional key leaves the variable unset, as the kubelet does).
 */
export function effectiveEnv(
  deployment: K8sObject,
  objects: K8sObject[],
  base: Record<string, string> = {},
): Record<string, string> {
  const container = containerOf(deployment);
  const env: Record<string, string> = { ...base };
  for (const source of container.envFrom ?? []) {
    const name = source.configMapRef?.name;
    const configMap = byKind(objects, "ConfigMap").find((c) => c.metadata.name === name);
    Object.assign(env, configMap?.data ?? {});
  }
  for (const variable of container.env ?? []) {
    if (variable.value !== undefined) env[variable.name] = String(variable.value);
    const ref = variable.valueFrom?.secretKeyRef;
    if (!ref) continue;
    const secret = byKind(objects, "Secret").find((s) => s.metadata.name === ref.name);
    const plain = secret?.stringData?.[ref.key];
    const encoded = secret?.data?.[ref.key];
    if (plain !== undefined) env[variable.name] = plain;
    else if (encoded !== undefined) env[variable.name] = Buffer.from(encoded, "base64").toString("utf8");
  }
  return env;
}

/** Every environment variable name a Deployment's container sets (envFrom ConfigMaps included). */
export function envNamesOf(deployment: K8sObject, objects: K8sObject[]): string[] {
  const container = containerOf(deployment);
  const names = new Set<string>((container.env ?? []).map((e: { name: string }) => e.name));
  for (const source of container.envFrom ?? []) {
    const configMap = byKind(objects, "ConfigMap").find((c) => c.metadata.name === source.configMapRef?.name);
    for (const key of Object.keys(configMap?.data ?? {})) names.add(key);
  }
  return [...names];
}

/**
 * Where a Deployment mounts ConfigMap `configMap`: the mount path and whether
 * it is read-only, or undefined when no volume of its pod is that ConfigMap.
 */
export function configMapMountOf(
  deployment: K8sObject,
  configMap: string,
): { mountPath: string; readOnly: boolean } | undefined {
  const volume = (deployment.spec.template.spec.volumes ?? []).find(
    (v: { configMap?: { name: string } }) => v.configMap?.name === configMap,
  );
  if (!volume) return undefined;
  const mount = (containerOf(deployment).volumeMounts ?? []).find((m: { name: string }) => m.name === volume.name);
  return mount ? { mountPath: mount.mountPath, readOnly: mount.readOnly === true } : undefined;
}

/** The one Deployment of a service (by its `app.kubernetes.io/component` label); throws when there is none or several. */
export function deploymentOf(objects: K8sObject[], service: string): K8sObject {
  const found = byKind(objects, "Deployment").filter(
    (d) => d.metadata.labels?.["app.kubernetes.io/component"] === service,
  );
  if (found.length !== 1) throw new Error(`expected one Deployment for ${service}, found ${found.length}`);
  return found[0] as K8sObject;
}

/**
 * The arguments a Redis container's `sh -c` script hands redis-server, as its shell makes them
 * (quotes, `$(…)`, the password's hash): the script run by sh with `env` and `redis-server`
 * (and docker-entrypoint.sh in front of it) replaced by printf.
 */
export function redisServerArgs(script: string, env: Record<string, string>): string[] {
  const printing = script.replace(/(^|; *)exec (?:docker-entrypoint\.sh )?redis-server /, "$1exec printf '%s\\0' ");
  if (printing === script) throw new Error(`not an 'exec redis-server …' script: ${script}`);
  const output = execFileSync("sh", ["-c", printing], {
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", ...env },
    encoding: "utf8",
  });
  return output.split("\0").slice(0, -1);
}

/** The ACL users of redis-server arguments: `--user <name> <rule> …`, up to the next `--option`. */
export function redisUsersOf(args: readonly string[]): Record<string, string[]> {
  const users: Record<string, string[]> = {};
  args.forEach((arg, index) => {
    if (arg !== "--user") return;
    const [name, ...rest] = args.slice(index + 1);
    const end = rest.findIndex((word) => word.startsWith("--"));
    users[name as string] = end === -1 ? rest : rest.slice(0, end);
  });
  return users;
}

/**
 * What a client sees of a redis-server started with `args` (less `--dir`: a private port and
 * directory instead): the healthcheck / probe command `probe` (its `redis-cli` pointed at that
 * port, REDISCLI_AUTH `password`) and, as `user` with `password`, the reply to each of `commands`;
 * then, when `afterRestart` is given, the server is stopped and started again on its data (AOF)
 * and the reply to each of those is added as `restarted`.
 */
export async function observeRedis(
  args: readonly string[],
  user: string,
  password: string,
  probe: string,
  commands: string[][],
  afterRestart: string[][] = [],
): Promise<{ probeExit: number; anonymous: string; replies: string[]; restarted: string[] }> {
  const withoutDir = args.filter((_, i) => args[i] !== "--dir" && args[i - 1] !== "--dir");
  const port = await freePort();
  const server = privateRedis(port, { args: withoutDir });
  await server.start();
  try {
    const cli = (words: string[], auth?: string) =>
      spawnSync("redis-cli", ["-p", String(port), ...words], {
        encoding: "utf8",
        env: { PATH: process.env.PATH ?? "/usr/bin:/bin", ...(auth ? { REDISCLI_AUTH: auth } : {}) },
      }).stdout.trim();
    const probed = spawnSync("sh", ["-c", probe.replaceAll("redis-cli ", `redis-cli -p ${port} `)], {
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", REDISCLI_AUTH: password },
    });
    const seen = {
      probeExit: probed.status ?? -1,
      anonymous: cli(["PING"]),
      replies: commands.map((command) => cli(["--user", user, ...command], password)),
    };
    if (afterRestart.length === 0) return { ...seen, restarted: [] };
    await server.stop();
    await server.start();
    return { ...seen, restarted: afterRestart.map((command) => cli(["--user", user, ...command], password)) };
  } finally {
    await server.destroy();
  }
}

/**
 * A Lua script that writes two keys under `prefix` (so the AOF holds it as a MULTI/EXEC, as every
 * store script's effects are), and the read after a restart that shows both, with `prefix`agent:a
 * (a plain SET) beside them: `kept`, `1`, `1`.
 */
export function scriptedWrite(prefix: string): { write: string[]; readBack: string[] } {
  return {
    write: [
      "EVAL",
      "redis.call('set', KEYS[1], 'kept') return redis.call('incr', KEYS[2])",
      "2",
      `${prefix}{a}:x`,
      `${prefix}{a}:n`,
    ],
    readBack: ["MGET", `${prefix}{a}:x`, `${prefix}{a}:n`, `${prefix}agent:a`],
  };
}

/** The Helm chart's directory, from the repository root. */
export const CHART = "deploy/helm/moniro";

/** `helm template` of the chart as release `release` in namespace moniro, parsed. */
export function renderChart(args: string[] = [], release = "moniro"): K8sObject[] {
  const output = run(tool("helm"), ["template", release, CHART, "--namespace", "moniro", ...args]);
  return parseManifests(output, `helm template ${args.join(" ")}`);
}

/** `helm template` expected to fail; returns its error output. */
export function renderChartError(args: string[]): string {
  tool("helm"); // a missing helm is its own failure, not the expected one
  try {
    renderChart(args);
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error(`helm template ${args.join(" ")} succeeded, expected it to fail`);
}
