// The four deploy artefacts side by side: each service listens on the same
// port in the Helm chart, k8s/, docker-compose.yml and the Dockerfile's
// EXPOSE, and that port is the service's own default where the code has one.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parse, parseDocument } from "yaml";
import { parseDockerfile } from "./dockerfile.js";
import { byKind, containerOf, envValue, parseManifests, ROOT, readText, SERVICES } from "./manifests.js";
import { CONFIG_LOADERS } from "./service-env.js";

const chartValues = parse(readText("deploy/helm/moniro/values.yaml")) as {
  services: Record<string, { port: number }>;
};
const compose = parseDocument(readText("docker-compose.yml"), { merge: true }).toJS({ maxAliasCount: 100 }) as {
  services: Record<string, { environment: Record<string, string> }>;
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
});
