// `moniro up` hands each service only its part of the environment
// (libs/cli/src/service-env.ts). Checked here against what each service's code
// reads, so a new setting cannot be silently withheld from the service that
// reads it, and a secret cannot reach a service that does not.
import { planService, STACK_SERVICES, stackOptions } from "@moniro/cli";
import { describe, expect, it } from "vitest";
import { envNamesKnownTo } from "./service-env.js";

const options = stackOptions({}, {}, "/home/me/project", "/repo");

/** Secrets and the one service each belongs to. */
const OWNER: Record<string, string> = { ANTHROPIC_API_KEY: "agent-runner", MONIRO_API_KEYS: "gateway" };

describe("moniro up: each service's environment", () => {
  it("passes every variable a service's code reads, and no other service's secret", () => {
    const all = new Set(STACK_SERVICES.flatMap((service) => [...envNamesKnownTo(service)]));
    const parent = Object.fromEntries([...all].map((name) => [name, `value-of-${name}`]));
    for (const service of STACK_SERVICES) {
      const env = planService(service, options, parent, "node").env;
      const reads = envNamesKnownTo(service);
      // Redis credentials go only to the services that connect to Redis.
      const notUsed = service === "signal-bridge" ? /^MONIRO_REDIS_/ : /^$/;
      const withheld = [...reads].filter((name) => !(name in env) && !notUsed.test(name));
      expect({ service, withheld }).toEqual({ service, withheld: [] });
      for (const [secret, owner] of Object.entries(OWNER)) {
        expect(`${service} ${secret}: ${secret in env}`).toBe(`${service} ${secret}: ${service === owner}`);
      }
    }
  });
});
