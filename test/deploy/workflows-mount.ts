import { expect } from "vitest";
import { configMapMountOf, deploymentOf, effectiveEnv, type K8sObject, SERVICES } from "./manifests.js";
import { loadConfigOf } from "./service-env.js";

/**
 * Asserts that the `moniro-workflows` ConfigMap is mounted read-only into the
 * gateway only, at the MONIRO_WORKFLOWS_DIR the gateway's own config loader
 * resolves (the chart and k8s/ both promise this).
 */
export async function expectWorkflowsMountedInGatewayOnly(
  objects: K8sObject[],
  imageEnv: Record<string, string>,
): Promise<void> {
  for (const service of SERVICES) {
    const deployment = deploymentOf(objects, service);
    const mount = configMapMountOf(deployment, "moniro-workflows");
    const env = effectiveEnv(deployment, objects, imageEnv);
    if (service !== "gateway") {
      expect({ service, mount, dir: env.MONIRO_WORKFLOWS_DIR }).toEqual({ service, mount: undefined, dir: undefined });
      continue;
    }
    expect(mount?.readOnly).toBe(true);
    expect((await loadConfigOf("gateway", env)).MONIRO_WORKFLOWS_DIR).toBe(mount?.mountPath);
  }
}
