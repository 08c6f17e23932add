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
});
