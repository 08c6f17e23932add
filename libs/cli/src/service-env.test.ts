import { describe, expect, it } from "vitest";
import { serviceEnvironment } from "./service-env.js";
import { STACK_SERVICES } from "./stack-plan.js";

describe("serviceEnvironment", () => {
  it("gives webhook secrets named MONIRO_HOOK_* to the gateway only; other secret-looking names to nobody", () => {
    const parent = { MONIRO_HOOK_GITHUB_SECRET: "s3cret-hook", GITHUB_WEBHOOK_SECRET: "elsewhere", PATH: "/usr/bin" };
    for (const service of STACK_SERVICES) {
      const env = serviceEnvironment(service, parent);
      expect({ service, hook: env.MONIRO_HOOK_GITHUB_SECRET }).toEqual({
        service,
        hook: service === "gateway" ? "s3cret-hook" : undefined,
      });
      expect(env.GITHUB_WEBHOOK_SECRET).toBeUndefined();
      expect(env.PATH).toBe("/usr/bin");
    }
  });

  it("gives the Redis settings of the parent (a URL may hold a password) to every service but signal-bridge", () => {
    const parent = { MONIRO_REDIS_URL: "redis://moniro:s3cret@10.0.0.5:6379", MONIRO_REDIS_PREFIX: "team:" };
    for (const service of STACK_SERVICES) {
      const env = serviceEnvironment(service, parent);
      expect({ service, url: env.MONIRO_REDIS_URL, prefix: env.MONIRO_REDIS_PREFIX }).toEqual(
        service === "signal-bridge"
          ? { service, url: undefined, prefix: undefined }
          : { service, url: parent.MONIRO_REDIS_URL, prefix: parent.MONIRO_REDIS_PREFIX },
      );
    }
  });
});
