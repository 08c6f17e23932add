import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { definitionHookCatalog, isBroken } from "./hook-catalog.js";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "moniro-hooks-"));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

function recordingLogger() {
  const lines: Array<{ level: string; fields: Record<string, unknown>; message: string }> = [];
  const at = (level: string) => (fields: Record<string, unknown>, message: string) => {
    lines.push({ level, fields, message });
  };
  return { lines, logger: { info: at("info"), warn: at("warn"), error: at("error") } };
}

const SECRET = "a-secret-of-enough-length";

describe("definitionHookCatalog", () => {
  it("serves each agent's hooks with their secrets from the environment, and logs 'auth: none' as an opt-out", async () => {
    writeFileSync(
      join(dir, "ops.yaml"),
      "name: ops\nmodel: m\nwebhooks:\n  gh: { auth: github, secret_env: GH }\n  ci: { auth: bearer, token_env: CI, priority: immediate }\n  open: { auth: none }\n",
    );
    const { lines, logger } = recordingLogger();
    const catalog = await definitionHookCatalog(dir, { env: { GH: SECRET, CI: SECRET }, logger });
    expect(await catalog.get("gh")).toMatchObject({
      agent: "ops",
      priority: "background",
      auth: { kind: "github", secret: SECRET },
    });
    expect(await catalog.get("ci")).toMatchObject({ priority: "immediate", auth: { kind: "bearer", token: SECRET } });
    expect(await catalog.get("open")).toMatchObject({ auth: { kind: "none" } });
    expect(await catalog.get("nope")).toBeUndefined();
    expect(lines.find((line) => line.level === "warn")).toMatchObject({
      fields: { hook: "open" },
      message: expect.stringMatching(/auth: none.*explicit opt-out/),
    });
  });

  it("a missing or short secret and a name defined twice make the hook unusable, logged with file, field and fix", async () => {
    writeFileSync(
      join(dir, "alice.yaml"),
      "name: alice\nmodel: m\nwebhooks:\n  gh: { auth: github, secret_env: UNSET }\n  dup: { auth: none }\n",
    );
    writeFileSync(
      join(dir, "bob.yaml"),
      "name: bob\nmodel: m\nwebhooks:\n  short: { auth: hmac, secret_env: SHORT }\n  dup: { auth: none }\n",
    );
    const { lines, logger } = recordingLogger();
    const catalog = await definitionHookCatalog(dir, { env: { SHORT: "tiny" }, logger });
    for (const name of ["gh", "short", "dup"]) {
      const hook = await catalog.get(name);
      expect(hook && isBroken(hook), name).toBe(true);
    }
    const problems = lines.filter((line) => line.level === "error").map((line) => String(line.fields.problem));
    expect(problems).toHaveLength(3);
    expect(problems).toEqual(
      expect.arrayContaining([
        expect.stringMatching(
          /alice\.yaml: webhooks\.gh\.secret_env: environment variable UNSET is not set .*: set it/,
        ),
        expect.stringMatching(
          /bob\.yaml: webhooks\.dup: hook 'dup' is also defined in .*alice\.yaml: hook names are global, rename one/,
        ),
        expect.stringMatching(
          /bob\.yaml: webhooks\.short\.secret_env: environment variable SHORT holds fewer than 16 characters/,
        ),
      ]),
    );
  });

  it("finds a hook added while it runs, and drops one removed", async () => {
    writeFileSync(join(dir, "ops.yaml"), "name: ops\nmodel: m\n");
    let clock = 0;
    const { logger } = recordingLogger();
    const catalog = await definitionHookCatalog(dir, {
      env: {},
      logger,
      now: () => clock,
      reloadAfterMs: 1_000,
      refreshAfterMs: 5_000,
    });
    writeFileSync(join(dir, "ops.yaml"), "name: ops\nmodel: m\nwebhooks:\n  later: { auth: none }\n");
    expect(await catalog.get("later")).toBeUndefined();
    clock = 1_000;
    expect(await catalog.get("later")).toMatchObject({ agent: "ops" });
    writeFileSync(join(dir, "ops.yaml"), "name: ops\nmodel: m\n");
    clock = 6_000;
    // Served at once from what it knows, re-read in the background.
    expect(await catalog.get("later")).toMatchObject({ agent: "ops" });
    await new Promise((resolve) => setTimeout(resolve, 50));
    clock = 6_500;
    expect(await catalog.get("later")).toBeUndefined();
  });
});
