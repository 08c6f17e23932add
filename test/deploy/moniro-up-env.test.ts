// `moniro up` hands each service only its part of the environment
// (libs/cli/src/service-env.ts). Checked here against what each service's code
// reads, so a new setting cannot be silently withheld from the service that
// reads it, and a secret cannot reach a service that does not.
import { NATS_USERS, passwordVariable } from "@moniro/bus";
import { planService, STACK_SERVICES, stackOptions } from "@moniro/cli";
import { describe, expect, it } from "vitest";
import { envNamesKnownTo } from "./service-env.js";

const options = stackOptions({}, {}, "/home/me/project", "/repo");

/** Secrets and the one service each belongs to. */
const OWNER: Record<string, string> = { ANTHROPIC_API_KEY: "agent-runner", MONIRO_API_KEYS: "gateway" };

/**
 * The NATS password of each service's user (`MONIRO_NATS_PASSWORD_AGENT_RUNNER`): nats-server reads it
 * (libs/bus nats-permissions, which names some in its comments); `up` makes a service's own its
 * MONIRO_NATS_PASSWORD, and passes none of them on under that name.
 */
const USER_PASSWORDS = NATS_USERS.map((user) => passwordVariable(user));

describe("moniro up: each service's environment", () => {
  it("passes every variable a service's code reads, and no other service's secret", () => {
    // Without the per-user passwords, which replace the rest of the NATS login (next test).
    const all = new Set(STACK_SERVICES.flatMap((service) => [...envNamesKnownTo(service)]));
    const parent = Object.fromEntries(
      [...all].filter((name) => !USER_PASSWORDS.includes(name)).map((name) => [name, `value-of-${name}`]),
    );
    for (const service of STACK_SERVICES) {
      const env = planService(service, options, parent, "node").env;
      const reads = envNamesKnownTo(service);
      // Redis credentials go only to the services that connect to Redis.
      const notUsed = service === "signal-bridge" ? /^MONIRO_REDIS_/ : /^$/;
      const withheld = [...reads].filter(
        (name) => !(name in env) && !notUsed.test(name) && !USER_PASSWORDS.includes(name),
      );
      expect({ service, withheld }).toEqual({ service, withheld: [] });
      for (const [secret, owner] of Object.entries(OWNER)) {
        expect(`${service} ${secret}: ${secret in env}`).toBe(`${service} ${secret}: ${service === owner}`);
      }
    }
  });

  it("turns the parent's MONIRO_NATS_PASSWORD_<SERVICE> into that service's own NATS login, and shows it to no other", () => {
    const parent = {
      MONIRO_NATS_USER: "shared",
      MONIRO_NATS_PASSWORD: "shared",
      MONIRO_NATS_TOKEN: "shared",
      ...Object.fromEntries(USER_PASSWORDS.map((name) => [name, `value-of-${name}`])),
    };
    for (const service of STACK_SERVICES) {
      const env = planService(service, options, parent, "node").env;
      expect({ service, user: env.MONIRO_NATS_USER, password: env.MONIRO_NATS_PASSWORD }).toEqual({
        service,
        user: service,
        password: `value-of-${passwordVariable(service)}`,
      });
      const others = USER_PASSWORDS.filter((name) => name !== passwordVariable(service));
      expect({ service, leaked: others.filter((name) => JSON.stringify(env).includes(`value-of-${name}`)) }).toEqual({
        service,
        leaked: [],
      });
      expect(Object.keys(env).filter((name) => USER_PASSWORDS.includes(name))).toEqual([]);
      expect(env, service).not.toHaveProperty("MONIRO_NATS_TOKEN");
    }
  });
});
