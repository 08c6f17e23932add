// Whether an esbuild bundle is older than what it was built from: shared by
// the CLI's bundle script and the services' (services/bundle.mjs), whose
// `--check` refuses to let tests or benches run a stale bundle.
import { readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";

/**
 * The first reason the bundle at `entry` needs building again, or undefined
 * when it is current. `meta` is esbuild's metafile of that build (its inputs
 * are relative to `root`); `rebuild` is the command that builds it again.
 */
export function bundleStaleness({ entry, meta, root, rebuild }) {
  const shown = relative(root, entry);
  let built;
  let inputs;
  try {
    built = statSync(entry).mtimeMs;
    inputs = Object.keys(JSON.parse(readFileSync(meta, "utf8")).inputs);
  } catch {
    return `${shown} was not built: run '${rebuild}'`;
  }
  for (const input of inputs) {
    let modified;
    try {
      modified = statSync(join(root, input)).mtimeMs;
    } catch {
      return `${input} (bundled into ${shown}) is gone: run '${rebuild}'`;
    }
    if (modified > built) return `${input} changed after ${shown} was built: run '${rebuild}'`;
  }
  return undefined;
}
