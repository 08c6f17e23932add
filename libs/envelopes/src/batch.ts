/**
 * Batched inputs (seed 003 "batched votes"): inputs whose `meta.batch` is the
 * same key belong together (a proposal's votes carry
 * `votes:<workflow>:<tag>`). Waiting inputs taken at one step boundary that
 * share a key are meant to reach the model as one input: these helpers group
 * them, in arrival order, where the first of the group was.
 */

/** The batch key of an input (`meta.batch`, a non-empty string), or undefined. */
export function batchOf(envelope: { meta?: Record<string, unknown> | undefined }): string | undefined {
  const batch = envelope.meta?.batch;
  return typeof batch === "string" && batch !== "" ? batch : undefined;
}

/**
 * Groups items of one injection: those with the same batch key join the
 * first of them (in order); items without a key stand alone.
 */
export function groupByBatch<T>(items: readonly T[], keyOf: (item: T) => string | undefined): T[][] {
  const groups: T[][] = [];
  const byKey = new Map<string, T[]>();
  for (const item of items) {
    const key = keyOf(item);
    const group = key === undefined ? undefined : byKey.get(key);
    if (group !== undefined) {
      group.push(item);
      continue;
    }
    const fresh = [item];
    if (key !== undefined) byKey.set(key, fresh);
    groups.push(fresh);
  }
  return groups;
}

/** The text of a batched group: each input's text on its own line, in arrival order. */
export function batchText(texts: readonly string[]): string {
  return texts.length === 1 ? (texts[0] ?? "") : texts.join("\n");
}
