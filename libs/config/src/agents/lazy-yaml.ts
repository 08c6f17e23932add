import { createRequire } from "node:module";

type Yaml = typeof import("yaml");
const require = createRequire(import.meta.url);
let loaded: Yaml | undefined;

/**
 * The `yaml` package, loaded on first use. Every service imports this library
 * (the registry validates records with its schemas), but only the processes
 * that read definition files parse YAML: the runner, scheduler and
 * signal-bridge never do, and the parser is ~0.7 MiB of heap for each. `yaml`
 * resolves to its CommonJS build under Node, so this is the same module
 * instance an `import` would give.
 */
export function yaml(): Yaml {
  loaded ??= require("yaml") as Yaml;
  return loaded;
}
