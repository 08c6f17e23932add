import { accessSync, constants } from "node:fs";
import { delimiter, join } from "node:path";

const cache = new Map<string, string | undefined>();

/** The absolute path of an executable on PATH, or undefined (cached per process). */
export function which(program: string, path = process.env.PATH ?? "/usr/bin:/bin"): string | undefined {
  const key = `${program}\0${path}`;
  if (cache.has(key)) return cache.get(key);
  let found: string | undefined;
  for (const dir of path.split(delimiter)) {
    const candidate = join(dir, program);
    try {
      accessSync(candidate, constants.X_OK);
      found = candidate;
      break;
    } catch {}
  }
  cache.set(key, found);
  return found;
}
