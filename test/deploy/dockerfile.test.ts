// The Dockerfile, checked by reading it. `docker build` cannot run here: the
// docker CLI is installed but there is no Docker daemon (`docker info`:
// "Cannot connect to the Docker daemon") and none can be started on the
// project's machines, so these tests check what the build relies on instead:
// every workspace manifest reaches `npm ci`, every service is compiled, what
// runtime code imports survives `npm prune --omit=dev`, the .dockerignore
// keeps host build output out, and the image's user, ports, environment and
// CMD match the services' entry points (their bundles, `npm run build`
// output) and the other deploy artefacts.
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { builtinModules } from "node:module";
import { dirname, join } from "node:path";
import { SERVICE_NODE_FLAGS } from "@moniro/config/service";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { envOf, execForm, type Instruction, parseDockerfile, type Stage } from "./dockerfile.js";
import { ROOT, readText, SERVICES } from "./manifests.js";
import { configErrorOf, unknownEnvNames } from "./service-env.js";

const dockerfile = parseDockerfile(readText("Dockerfile"));
const build = dockerfile.stages.find((s) => s.name === "build") as Stage;
const runtime = dockerfile.stages.at(-1) as Stage;
const of = (stage: Stage, keyword: string): Instruction[] => stage.instructions.filter((i) => i.keyword === keyword);
const rootManifest = JSON.parse(readText("package.json")) as {
  workspaces: string[];
  dependencies?: Record<string, string>;
};

/** Workspace directories (libs/x, services/y) that hold a package.json. */
function workspaceDirs(): string[] {
  return rootManifest.workspaces.flatMap((glob) => {
    const parent = glob.replace(/\/\*$/, "");
    return readdirSync(join(ROOT, parent))
      .map((entry) => `${parent}/${entry}`)
      .filter((dir) => existsSync(join(ROOT, dir, "package.json")));
  });
}

/** The workspace (libs/x or services/y) a file belongs to. */
const workspaceOf = (file: string) =>
  file
    .slice(ROOT.length + 1)
    .split("/")
    .slice(0, 2)
    .join("/");

/** Workspace directory and package.json of each @moniro/* package. */
function workspacePackages(): Map<string, { dir: string; exports: Record<string, { source?: string }> }> {
  const map = new Map<string, { dir: string; exports: Record<string, { source?: string }> }>();
  for (const dir of workspaceDirs()) {
    const manifest = JSON.parse(readFileSync(join(ROOT, dir, "package.json"), "utf8")) as {
      name: string;
      exports?: Record<string, { source?: string }>;
    };
    map.set(manifest.name, { dir, exports: manifest.exports ?? {} });
  }
  return map;
}

/** A relative import's TypeScript source: `./x.js` is `./x.ts`, a directory its index.ts. */
function resolveRelative(from: string, specifier: string): string {
  const base = join(dirname(from), specifier);
  for (const candidate of [base.replace(/\.js$/, ".ts"), `${base}.ts`, join(base, "index.ts"), base]) {
    if (existsSync(candidate) && statSync(candidate).isFile()) return candidate;
  }
  throw new Error(`${from}: cannot resolve ${specifier}`);
}

/**
 * Every file the service's entry point loads at run time, following relative
 * imports and @moniro/* packages (through their exports' source files), with
 * the bare external packages each file imports.
 */
function runtimeGraph(entry: string): Array<{ file: string; external: string[] }> {
  const packages = workspacePackages();
  const seen = new Set<string>();
  const result: Array<{ file: string; external: string[] }> = [];
  const pending = [entry];
  while (pending.length > 0) {
    const file = pending.pop() as string;
    if (seen.has(file)) continue;
    seen.add(file);
    const external: string[] = [];
    for (const specifier of runtimeImports(readFileSync(file, "utf8"))) {
      if (specifier.startsWith(".")) {
        pending.push(resolveRelative(file, specifier));
        continue;
      }
      const name = packageName(specifier);
      const workspace = packages.get(name);
      if (!workspace) {
        external.push(name);
        continue;
      }
      const subpath = `.${specifier.slice(name.length)}`;
      const source = workspace.exports[subpath]?.source;
      if (!source) throw new Error(`${file}: ${specifier} is not exported by ${workspace.dir}/package.json`);
      pending.push(join(ROOT, workspace.dir, source));
    }
    result.push({ file, external });
  }
  return result;
}

/** Module specifiers a file loads at run time (type-only imports are erased). */
function runtimeImports(text: string): string[] {
  const found: string[] = [];
  const patterns = [
    /^\s*(?:import|export)\s+(?!type\s)(?:[^"';]*?\sfrom\s+)?["']([^"']+)["']/gm,
    /\bimport\(\s*["']([^"']+)["']\s*\)/g,
    /\brequire(?:\.resolve)?\(\s*["']([^"']+)["']\s*\)/g,
  ];
  for (const pattern of patterns) for (const match of text.matchAll(pattern)) found.push(match[1] as string);
  return found.filter((s) => !s.startsWith("node:") && !builtinModules.includes(s));
}

const packageName = (specifier: string) =>
  specifier.startsWith("@") ? specifier.split("/").slice(0, 2).join("/") : (specifier.split("/")[0] as string);

describe("Dockerfile", () => {
  it("builds in a Node 20 stage and runs in a separate Node 20 runtime stage", () => {
    expect(build).toBeDefined();
    expect(dockerfile.stages.length).toBeGreaterThanOrEqual(2);
    const nodeImage = dockerfile.args.find((a) => a.args.startsWith("NODE_IMAGE="))?.args.split("=")[1];
    expect(nodeImage).toMatch(/^node:20(\.|-|$)/);
    for (const stage of dockerfile.stages) expect(stage.from).toMatch(/^(\$\{NODE_IMAGE\}|node:20)/);
  });

  it("copies every workspace's package.json before npm ci, so the lockfile's workspaces all resolve", () => {
    const copies = of(build, "COPY").map((c) => c.args);
    const npmCi = build.instructions.findIndex((i) => i.keyword === "RUN" && /\bnpm ci\b/.test(i.args));
    expect(npmCi).toBeGreaterThan(0);
    const before = build.instructions.slice(0, npmCi).filter((i) => i.keyword === "COPY");
    for (const dir of workspaceDirs()) {
      expect(
        before.some((c) => c.args.split(/\s+/).includes(`${dir}/package.json`)),
        `COPY ${dir}/package.json before npm ci`,
      ).toBe(true);
    }
    expect(copies.some((c) => /package-lock\.json/.test(c))).toBe(true);
  });

  it("compiles all five services (tsc --build) and copies their output into the runtime stage", () => {
    const tsc = of(build, "RUN").find((r) => /tsc --build/.test(r.args))?.args ?? "";
    for (const service of SERVICES) expect(tsc, service).toMatch(new RegExp(`services/${service}(\\s|$)`));
    expect(tsc).toMatch(/npm prune --omit=dev/);
    // Each service's dist/main.js is then its bundle (services/bundle.mjs), made while esbuild (a dev dependency) is there.
    expect(tsc).toMatch(/npm run --silent build:services[\s\S]*npm prune --omit=dev/);
    expect(JSON.parse(readText("package.json")).scripts["build:services"]).toBe("node services/bundle.mjs");
    const copied = of(runtime, "COPY").map((c) => c.args);
    for (const path of ["node_modules", "libs", "services", "package.json"]) {
      expect(
        copied.some((c) => c.startsWith("--from=build") && c.includes(`/app/${path}`)),
        path,
      ).toBe(true);
    }
  });

  it("keeps host node_modules, dist and tsbuildinfo out of the build context (.dockerignore)", () => {
    const ignored = readText(".dockerignore")
      .split("\n")
      .map((l) => l.trim())
      .filter((l) => l && !l.startsWith("#"));
    for (const pattern of ["**/node_modules", "**/dist", "**/*.tsbuildinfo"]) expect(ignored).toContain(pattern);
    for (const needed of ["libs", "services", "package.json", "package-lock.json", "tsconfig.base.json"]) {
      expect(ignored, needed).not.toContain(needed);
    }
  });

  it("declares every package the services load at run time as a production dependency (survives npm prune)", () => {
    const missing = new Set<string>();
    for (const service of SERVICES) {
      for (const { file, external } of runtimeGraph(join(ROOT, "services", service, "src", "main.ts"))) {
        const dir = workspaceOf(file);
        const manifest = JSON.parse(readFileSync(join(ROOT, dir, "package.json"), "utf8")) as Record<
          string,
          Record<string, string> | undefined
        >;
        const declared = new Set([
          ...Object.keys(manifest.dependencies ?? {}),
          ...Object.keys(manifest.peerDependencies ?? {}),
          ...Object.keys(manifest.optionalDependencies ?? {}),
        ]);
        for (const name of external) {
          if (!declared.has(name)) missing.add(`${file.slice(ROOT.length + 1)}: ${name} (not in ${dir}/package.json)`);
        }
      }
    }
    expect([...missing]).toEqual([]);
    // The walk reaches the libraries: the gateway loads express, the scheduler bullmq.
    expect(runtimeGraph(join(ROOT, "services/gateway/src/main.ts")).flatMap((f) => f.external)).toContain("express");
    expect(runtimeGraph(join(ROOT, "services/scheduler/src/main.ts")).flatMap((f) => f.external)).toContain("bullmq");
  });

  it("runs as a non-root user, the uid the chart and manifests run as", () => {
    const user = of(runtime, "USER").at(-1)?.args;
    expect(user).toBeDefined();
    expect(user).not.toMatch(/^(root|0)(:|$)/);
    // USER node is uid 1000 in the official node images; the chart sets runAsUser to match.
    const values = parse(readText("deploy/helm/moniro/values.yaml")) as { podSecurityContext: { runAsUser: number } };
    expect(user === "node" ? 1000 : Number(user?.split(":")[0])).toBe(values.podSecurityContext.runAsUser);
    // The workspaces directory exists and belongs to that user (named volumes inherit it).
    const env = envOf(runtime);
    const prepare = of(runtime, "RUN")
      .map((r) => r.args)
      .join(" ");
    expect(prepare).toContain(`mkdir -p`);
    expect(prepare).toContain(env.MONIRO_WORKSPACES_DIR as string);
    expect(prepare).toMatch(/chown -R node:node \/data/);
  });

  it("runs tini as PID 1 (ENTRYPOINT, installed in the image) and a CMD of node <compiled entry point>, so the command picks the service", () => {
    expect(execForm(runtime, "ENTRYPOINT")).toEqual(["/usr/bin/tini", "--"]);
    expect(of(runtime, "RUN").some((r) => /apt-get install[^&]*\btini\b/.test(r.args))).toBe(true);
    const cmd = execForm(runtime, "CMD");
    expect(cmd?.[0]).toBe("node");
    expect(SERVICES.map((s) => `services/${s}/dist/main.js`)).toContain(cmd?.[1]);
  });

  it("ships bubblewrap, the tool-executor's exec sandbox, and never switches the sandbox off", () => {
    const install = of(runtime, "RUN").find((r) => /apt-get install/.test(r.args));
    expect(install?.args).toMatch(/apt-get install[^&]*\bbubblewrap\b/);
    // Installed in the runtime stage, after which nothing removes it.
    expect(of(runtime, "RUN").some((r) => /apt-get (remove|purge)|dpkg -r/.test(r.args))).toBe(false);
    expect(envOf(runtime)).not.toHaveProperty("MONIRO_EXEC_UNSAFE_NO_SANDBOX");
    expect(readText("Dockerfile")).not.toContain("MONIRO_EXEC_UNSAFE_NO_SANDBOX");
  });

  it("runs services/<service>/dist/main.js, the bundle npm run build makes of src/main.ts, current with its sources", () => {
    for (const service of SERVICES) {
      expect(existsSync(join(ROOT, "services", service, "src", "main.ts")), service).toBe(true);
      const built = join(ROOT, "services", service, "dist", "main.js");
      expect(existsSync(built), `${built} is missing: run 'npm run build' (npm test does)`).toBe(true);
      // esbuild's list of what went into it: src/main.ts and the workspace sources it imports.
      const meta = JSON.parse(readText(`services/${service}/dist/main.meta.json`)) as {
        inputs: Record<string, unknown>;
      };
      expect(Object.keys(meta.inputs), service).toContain(`services/${service}/src/main.ts`);
    }
    const check = spawnSync(process.execPath, [join(ROOT, "services", "bundle.mjs"), "--check"], { encoding: "utf8" });
    expect(check.stderr).toBe("");
    expect(check.status).toBe(0);
  });

  it("exposes every service's default port", () => {
    const exposed = of(runtime, "EXPOSE").flatMap((e) => e.args.split(/\s+/));
    const values = parse(readText("deploy/helm/moniro/values.yaml")) as { services: Record<string, { port: number }> };
    for (const service of SERVICES) expect(exposed, service).toContain(String(values.services[service]?.port));
  });

  it("runs node with the services' flags (SERVICE_NODE_FLAGS) through NODE_OPTIONS", () => {
    expect(envOf(runtime).NODE_OPTIONS?.split(/\s+/)).toEqual([...SERVICE_NODE_FLAGS]);
  });

  it("sets only environment names the services read, and values every service accepts", async () => {
    const env = envOf(runtime);
    expect(env.MONIRO_HTTP_HOST).toBe("0.0.0.0");
    for (const service of SERVICES) {
      expect({ service, unknown: unknownEnvNames(service, Object.keys(env)) }).toEqual({ service, unknown: [] });
      const withKeys = service === "gateway" ? { ...env, MONIRO_API_KEYS: "k" } : env;
      expect({ service, error: await configErrorOf(service, withKeys) }).toEqual({ service, error: undefined });
    }
  });
});
