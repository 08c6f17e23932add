import { passwordVariable } from "@moniro/bus";
import { SERVICE_NODE_FLAGS, serviceNodeFlags } from "@moniro/config/service";
import { describe, expect, it } from "vitest";
import { stackOptions } from "./cli-options.js";
import { planService, STACK_SERVICES, type StackService, servicePort } from "./stack-plan.js";

const options = stackOptions({}, {}, "/home/me/project", "/repo");

describe("planService", () => {
  it("starts node on the service's built entry point with its own port and the stack's URLs", () => {
    const plan = planService("scheduler", options, { PATH: "/usr/bin", UNSET: undefined }, "/usr/bin/node");
    expect(plan.command).toBe("/usr/bin/node");
    expect(plan.args).toEqual([
      ...SERVICE_NODE_FLAGS,
      "--interrupt-budget=1081344",
      "/repo/services/scheduler/dist/main.js",
    ]);
    // The runner adds its own flags after the shared ones (SERVICE_EXTRA_NODE_FLAGS).
    const runner = planService("agent-runner", options, { PATH: "/usr/bin" }, "/usr/bin/node");
    expect(runner.args).toEqual([...serviceNodeFlags("agent-runner"), "/repo/services/agent-runner/dist/main.js"]);
    expect(runner.args).toContain("--max-semi-space-size=32");
    expect(plan.readyUrl).toBe("http://127.0.0.1:9103/readyz");
    expect(plan.env).toMatchObject({
      PATH: "/usr/bin",
      MONIRO_NATS_URL: "nats://127.0.0.1:4222",
      MONIRO_REDIS_URL: "redis://127.0.0.1:6379",
      MONIRO_HTTP_HOST: "127.0.0.1",
      MONIRO_HTTP_PORT: "9103",
      MONIRO_AGENTS_DIR: "/home/me/project/.agents",
      MONIRO_WORKSPACES_DIR: "/home/me/project/.moniro/workspaces",
      OTEL_SERVICE_NAME: "scheduler",
    });
    expect(plan.env).not.toHaveProperty("MONIRO_GATEWAY_OPEN");
    expect(plan.env).not.toHaveProperty("MONIRO_PROJECT_DIR");
    expect(plan.env).not.toHaveProperty("UNSET");
    expect(plan.env).not.toHaveProperty("MONIRO_NAMESPACE");
    expect(plan.env).not.toHaveProperty("MONIRO_REDIS_PREFIX");
  });

  it("gives the gateway 8080 and the others 9101-9104, all distinct", () => {
    const ports = STACK_SERVICES.map((s) => servicePort(s, options));
    expect(servicePort("gateway", options)).toBe(8080);
    expect(new Set(ports).size).toBe(5);
    expect(ports.filter((p) => p !== 8080).sort()).toEqual([9101, 9102, 9103, 9104]);
  });

  it("opens the gateway only when no API keys are configured", () => {
    const plan = planService("gateway", options, { MONIRO_API_KEYS: "k1" }, "node");
    expect(plan.env).not.toHaveProperty("MONIRO_GATEWAY_OPEN");
    expect(plan.env.MONIRO_API_KEYS).toBe("k1");
    expect(planService("gateway", options, {}, "node").env.MONIRO_GATEWAY_OPEN).toBe("true");
  });

  it("points the gateway at the project root (the cwd, or MONIRO_PROJECT_DIR) for its moniro.yaml", () => {
    expect(planService("gateway", options, {}, "node").env.MONIRO_PROJECT_DIR).toBe("/home/me/project");
    const elsewhere = stackOptions({}, { MONIRO_PROJECT_DIR: "../shared" }, "/home/me/project", "/repo");
    expect(planService("gateway", elsewhere, {}, "node").env.MONIRO_PROJECT_DIR).toBe("/home/me/shared");
  });

  it("gives each service only its own secrets: the LLM key to the agent-runner, the API keys to the gateway", () => {
    const parent = {
      PATH: "/usr/bin",
      HOME: "/home/me",
      LANG: "C.UTF-8",
      TZ: "UTC",
      NODE_OPTIONS: "--enable-source-maps",
      NODE_EXTRA_CA_CERTS: "/ca.pem",
      ANTHROPIC_API_KEY: "sk-ant-SENTINEL",
      ANTHROPIC_BASE_URL: "http://127.0.0.1:9999",
      MONIRO_API_KEYS: "gw-SENTINEL",
      MONIRO_NATS_USER: "svc",
      MONIRO_NATS_PASSWORD: "nats-SENTINEL",
      MONIRO_REDIS_USERNAME: "svc",
      MONIRO_REDIS_PASSWORD: "redis-SENTINEL",
      MONIRO_LOG_LEVEL: "debug",
      MONIRO_EXEC_TIMEOUT_MS: "5000",
      MONIRO_SIGNAL_URL: "http://127.0.0.1:8081",
      MONIRO_MOCK_STEP_DELAY_MS: "300",
      GITHUB_TOKEN: "ghp-SENTINEL",
      AWS_SECRET_ACCESS_KEY: "aws-SENTINEL",
      SSH_AUTH_SOCK: "/run/ssh",
    };
    const envOf = (service: (typeof STACK_SERVICES)[number]) => planService(service, options, parent, "node").env;
    const platform = { PATH: "/usr/bin", HOME: "/home/me", LANG: "C.UTF-8", TZ: "UTC" };
    for (const service of STACK_SERVICES) {
      const env = envOf(service);
      expect(env, service).toMatchObject({
        ...platform,
        NODE_OPTIONS: "--enable-source-maps",
        MONIRO_LOG_LEVEL: "debug",
      });
      expect({ service, nats: env.MONIRO_NATS_PASSWORD, user: env.MONIRO_NATS_USER }).toEqual({
        service,
        nats: "nats-SENTINEL",
        user: "svc",
      });
      expect(env.ANTHROPIC_API_KEY !== undefined, service).toBe(service === "agent-runner");
      expect(env.ANTHROPIC_BASE_URL !== undefined, service).toBe(service === "agent-runner");
      expect(env.MONIRO_API_KEYS !== undefined, service).toBe(service === "gateway");
      expect(env.MONIRO_REDIS_PASSWORD !== undefined, service).toBe(service !== "signal-bridge");
      expect(env.MONIRO_EXEC_TIMEOUT_MS !== undefined, service).toBe(service === "tool-executor");
      expect(env.MONIRO_SIGNAL_URL !== undefined, service).toBe(service === "signal-bridge");
      expect(env.MONIRO_MOCK_STEP_DELAY_MS !== undefined, service).toBe(service === "agent-runner");
      for (const unrelated of ["GITHUB_TOKEN", "AWS_SECRET_ACCESS_KEY", "SSH_AUTH_SOCK"]) {
        expect(env, `${service} ${unrelated}`).not.toHaveProperty(unrelated);
      }
    }
  });

  it("hands each service its own NATS user of a server up started, over the parent's login, and the services' Redis user", () => {
    const nats = Object.fromEntries(
      STACK_SERVICES.map((service) => [service, { user: service, password: `nats-${service}-generated` }]),
    ) as Record<StackService, { user: string; password: string }>;
    const credentials = { nats, redis: { username: "services", password: "redis-generated" } };
    const parent = {
      MONIRO_REDIS_USERNAME: "me",
      MONIRO_REDIS_PASSWORD: "redis-from-the-shell",
      MONIRO_NATS_USER: "other",
      MONIRO_NATS_PASSWORD: "x",
      MONIRO_NATS_TOKEN: "t",
      MONIRO_NATS_PASSWORD_AGENT_RUNNER: "from-the-shell",
    };
    for (const service of STACK_SERVICES) {
      const env = planService(service, { ...options, credentials }, parent, "node").env;
      expect({ service, user: env.MONIRO_NATS_USER, password: env.MONIRO_NATS_PASSWORD }).toEqual({
        service,
        user: service,
        password: `nats-${service}-generated`,
      });
      expect(env, service).not.toHaveProperty("MONIRO_NATS_TOKEN");
      // No other service's password, under any name.
      const others = STACK_SERVICES.filter((s) => s !== service).map((s) => `nats-${s}-generated`);
      for (const other of others) expect(JSON.stringify(env), service).not.toContain(other);
      expect(JSON.stringify(env), service).not.toContain("from-the-shell");
      if (service === "signal-bridge") expect(env).not.toHaveProperty("MONIRO_REDIS_PASSWORD");
      else
        expect(env, service).toMatchObject({
          MONIRO_REDIS_USERNAME: "services",
          MONIRO_REDIS_PASSWORD: "redis-generated",
        });
      expect(JSON.stringify(env), service).not.toContain("redis-from-the-shell");
    }
  });

  it("uses a NATS it did not start with the parent's login, or each service's own password when the parent has MONIRO_NATS_PASSWORD_<SERVICE>", () => {
    const shared = { MONIRO_NATS_USER: "svc", MONIRO_NATS_PASSWORD: "shared" };
    for (const service of STACK_SERVICES) {
      expect(planService(service, options, shared, "node").env, service).toMatchObject(shared);
    }
    // docker-compose.yml's NATS (`docker compose up -d nats redis`) has a user per service, its password in .env.
    const perService = {
      ...shared,
      MONIRO_NATS_TOKEN: "t",
      ...Object.fromEntries(STACK_SERVICES.map((s) => [passwordVariable(s), `own-${s}`])),
    };
    for (const service of STACK_SERVICES) {
      const env = planService(service, options, perService, "node").env;
      expect({ service, user: env.MONIRO_NATS_USER, password: env.MONIRO_NATS_PASSWORD }).toEqual({
        service,
        user: service,
        password: `own-${service}`,
      });
      expect(env, service).not.toHaveProperty("MONIRO_NATS_TOKEN");
      const names = Object.keys(env).filter((name) => name.startsWith("MONIRO_NATS_PASSWORD_"));
      expect({ service, names }).toEqual({ service, names: [] });
      for (const other of STACK_SERVICES.filter((s) => s !== service)) {
        expect(JSON.stringify(env), service).not.toContain(`own-${other}`);
      }
    }
  });

  it("uses ports chosen for port 0, and passes namespace and key prefix", () => {
    const chosen = stackOptions({ namespace: "demo_1", gatewayPort: "0" }, {}, "/p", "/repo");
    const plan = planService("gateway", { ...chosen, ports: { gateway: 41000 } }, {}, "node");
    expect(plan.env).toMatchObject({
      MONIRO_HTTP_PORT: "41000",
      MONIRO_NAMESPACE: "demo_1",
      MONIRO_REDIS_PREFIX: "demo_1:",
    });
    expect(plan.readyUrl).toBe("http://127.0.0.1:41000/readyz");
  });

  it("treats an empty MONIRO_REDIS_PREFIX as none: the services use their default, the one the services' user of up's Redis may use", () => {
    const empty = stackOptions({}, { MONIRO_REDIS_PREFIX: "" }, "/p", "/repo");
    expect(empty).not.toHaveProperty("redisPrefix");
    for (const service of STACK_SERVICES) {
      const env = planService(service, empty, { MONIRO_REDIS_PREFIX: "" }, "node").env;
      expect(env, service).not.toHaveProperty("MONIRO_REDIS_PREFIX");
    }
  });

  it("keeps the user's own MONIRO_* settings but not their port or URLs", () => {
    const custom = stackOptions({ gatewayPort: "18080", natsUrl: "nats://127.0.0.1:14222" }, {}, "/p", "/repo");
    const plan = planService(
      "gateway",
      custom,
      { MONIRO_LOG_LEVEL: "debug", MONIRO_HTTP_PORT: "1", MONIRO_GATEWAY_OPEN: "false", MONIRO_NATS_URL: "nats://x" },
      "node",
    );
    expect(plan.env).toMatchObject({
      MONIRO_LOG_LEVEL: "debug",
      MONIRO_GATEWAY_OPEN: "false",
      MONIRO_HTTP_PORT: "18080",
      MONIRO_NATS_URL: "nats://127.0.0.1:14222",
    });
  });
});

describe("stackOptions", () => {
  it("takes flags over MONIRO_* variables over defaults, and rejects bad ports naming the flag", () => {
    const fromEnv = stackOptions({}, { MONIRO_REDIS_URL: "redis://127.0.0.1:7000", MONIRO_BASE_PORT: "9200" }, "/p");
    expect(fromEnv).toMatchObject({ redisUrl: "redis://127.0.0.1:7000", basePort: 9200, dataDir: "/p/.moniro" });
    expect(stackOptions({ redisUrl: "redis://h:1" }, { MONIRO_REDIS_URL: "redis://x" }, "/p").redisUrl).toBe(
      "redis://h:1",
    );
    expect(() => stackOptions({ gatewayPort: "http" }, {}, "/p")).toThrow("--gateway-port must be a port number");
  });

  it("takes namespace, key prefix and directories from flags or MONIRO_* variables", () => {
    const fromEnv = stackOptions(
      {},
      {
        MONIRO_NAMESPACE: "dev",
        MONIRO_REDIS_PREFIX: "mine:",
        MONIRO_AGENTS_DIR: "defs",
        MONIRO_WORKSPACES_DIR: "/ws",
        MONIRO_DATA_DIR: "state",
      },
      "/p",
    );
    expect(fromEnv).toMatchObject({
      namespace: "dev",
      redisPrefix: "mine:",
      agentsDir: "/p/defs",
      workspacesDir: "/ws",
      dataDir: "/p/state",
    });
    expect(stackOptions({ namespace: "t1" }, { MONIRO_NAMESPACE: "dev" }, "/p")).toMatchObject({
      namespace: "t1",
      redisPrefix: "t1:",
      agentsDir: "/p/.agents",
      workspacesDir: "/p/.moniro/workspaces",
    });
    expect(stackOptions({}, {}, "/p")).not.toHaveProperty("namespace");
    expect(() => stackOptions({ namespace: "a.b" }, {}, "/p")).toThrow("--namespace must be one subject token");
  });
});
