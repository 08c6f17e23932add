import { describe, expect, it } from "vitest";
import { AgentDefinitionError } from "./agent-definition-error.js";
import { parseAgentDefinition } from "./load-agent-definitions.js";
import { compileTemplate, TemplateError } from "./webhook-template.js";

const FILE = "/tmp/agents/ops.yaml";

async function problems(webhooks: string): Promise<string> {
  const error = await parseAgentDefinition(FILE, `name: ops\nmodel: m\nwebhooks:\n${webhooks}`).then(
    () => undefined,
    (failure: unknown) => failure,
  );
  if (!(error instanceof AgentDefinitionError)) throw new Error(`expected an AgentDefinitionError, got ${error}`);
  return error.message;
}

describe("webhooks: in an agent definition", () => {
  it("parses each hook with its authentication, priority, template and bound", async () => {
    const definition = await parseAgentDefinition(
      FILE,
      [
        "name: ops",
        "model: m",
        "webhooks:",
        "  github:",
        "    auth: github",
        "    secret_env: GITHUB_WEBHOOK_SECRET",
        "    priority: immediate",
        "    template: '{{ $event }}: {{ pull_request.title }}'",
        "  deploy:",
        "    auth: hmac",
        "    secret_env: DEPLOY_SECRET",
        "    tolerance_s: 120",
        "    max_chars: 2000",
        "  ci: { auth: bearer, token_env: CI_TOKEN }",
        "  open: { auth: none }",
      ].join("\n"),
    );
    expect(definition.webhooks).toEqual({
      github: {
        auth: "github",
        secret_env: "GITHUB_WEBHOOK_SECRET",
        priority: "immediate",
        template: "{{ $event }}: {{ pull_request.title }}",
      },
      deploy: { auth: "hmac", secret_env: "DEPLOY_SECRET", tolerance_s: 120, max_chars: 2000 },
      ci: { auth: "bearer", token_env: "CI_TOKEN" },
      open: { auth: "none" },
    });
  });

  it("names the file, the field and the fix for every mistake", async () => {
    expect(await problems("  gh:\n    secret_env: X\n")).toBe(
      "/tmp/agents/ops.yaml: webhooks.gh.auth: must be one of github, hmac, bearer, none",
    );
    expect(await problems("  gh:\n    auth: gitlab\n")).toMatch(
      /webhooks\.gh\.auth: must be one of github, hmac, bearer, none \(got 'gitlab'\); did you mean 'github'\?/,
    );
    expect(await problems("  gh:\n    auth: github\n    secret_env: X\n    secrt: Y\n")).toMatch(
      /webhooks\.gh\.secrt: unknown key 'secrt'/,
    );
    expect(await problems("  gh:\n    auth: github\n")).toMatch(
      /webhooks\.gh\.secret_env: is required with 'auth: github': name the environment variable/,
    );
    expect(await problems("  ci:\n    auth: bearer\n")).toMatch(
      /webhooks\.ci\.token_env: is required with 'auth: bearer'/,
    );
    expect(await problems("  ci:\n    auth: none\n    token_env: X\n")).toMatch(
      /webhooks\.ci\.token_env: is used only with 'auth: bearer'; remove it/,
    );
    expect(await problems("  gh:\n    auth: github\n    secret_env: X\n    tolerance_s: 30\n")).toMatch(
      /webhooks\.gh\.tolerance_s: is used only with 'auth: hmac'/,
    );
    expect(await problems("  gh:\n    auth: hmac\n    secret_env: 's3cr3t value!'\n")).toMatch(
      /webhooks\.gh\.secret_env: must be the name of an environment variable .* the secret itself never goes into a file/,
    );
    expect(await problems("  gh:\n    auth: github\n    secret_env: MONIRO_REDIS_PASSWORD\n")).toMatch(
      /webhooks\.gh\.secret_env: 'MONIRO_REDIS_PASSWORD' is one of the services' own settings .* e\.g\. GITHUB_WEBHOOK_SECRET, or MONIRO_HOOK_<name>/,
    );
    expect(await problems("  ci:\n    auth: bearer\n    token_env: NODE_OPTIONS\n")).toMatch(
      /webhooks\.ci\.token_env: 'NODE_OPTIONS' is one of the services' own settings/,
    );
    const hooked = await parseAgentDefinition(
      FILE,
      "name: ops\nmodel: m\nwebhooks:\n  gh:\n    auth: github\n    secret_env: MONIRO_HOOK_GITHUB_SECRET\n",
    );
    expect(hooked.webhooks?.gh).toMatchObject({ secret_env: "MONIRO_HOOK_GITHUB_SECRET" });
    expect(await problems("  gh:\n    auth: none\n    template: 'PR {{ pull_request. }}'\n")).toMatch(
      /webhooks\.gh\.template: '\{\{ pull_request\. \}\}' is not a path/,
    );
    expect(await problems("  GitHub:\n    auth: none\n")).toMatch(/webhooks\.GitHub: 'GitHub' is not a hook name/);
  });
});

describe("compileTemplate", () => {
  it("splits literal text and paths of keys and indexes", () => {
    expect(
      compileTemplate("PR {{ pull_request.title }} ({{commits[0].id}}, {{ labels.1.name }}) {{ $event }}").parts,
    ).toEqual([
      { literal: "PR " },
      { path: ["pull_request", "title"], source: "pull_request.title" },
      { literal: " (" },
      { path: ["commits", 0, "id"], source: "commits[0].id" },
      { literal: ", " },
      { path: ["labels", 1, "name"], source: "labels.1.name" },
      { literal: ") " },
      { path: ["$event"], source: "$event" },
    ]);
  });

  it("refuses anything but a path, saying what to write", () => {
    const cases: Array<[string, RegExp]> = [
      ["{{ a", /a '\{\{' is never closed/],
      ["{{ }}", /is empty/],
      ["{{ process.exit() }}", /is not a path/],
      ["{{ a + b }}", /is not a path/],
      ["{{ $env.SECRET }}", /'\$env' is not a template variable: use one of \$hook, \$event, \$delivery/],
    ];
    for (const [template, message] of cases) {
      expect(() => compileTemplate(template)).toThrow(TemplateError);
      expect(() => compileTemplate(template)).toThrow(message);
    }
  });
});
