/**
 * `diff` and `tinyglobby` load on the first call that needs them, not when
 * the catalog is imported: the agent-runner and the gateway import the catalog
 * for its specs and policies only, and an executor that never patches or
 * globs never needs them (a few MiB of resident memory each; docs/performance.md §6 at `6887727`).
 */
let diff: Promise<typeof import("diff")> | undefined;
let tinyglobby: Promise<typeof import("tinyglobby")> | undefined;

export function diffLib(): Promise<typeof import("diff")> {
  diff ??= import("diff");
  return diff;
}

export function globLib(): Promise<typeof import("tinyglobby")> {
  tinyglobby ??= import("tinyglobby");
  return tinyglobby;
}
