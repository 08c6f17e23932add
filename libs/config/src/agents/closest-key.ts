/** Edit distance between two short strings (keys of a YAML mapping). */
function distance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, index) => index);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const substitution = (previous[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1);
      current[j] = Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, substitution);
    }
    previous = current;
  }
  return previous[b.length] ?? 0;
}

/**
 * The known key a typo most likely meant (`max_step` → `max_steps`,
 * `systemFile` → `system_file`), or undefined when none is close.
 */
export function closestKey(key: string, known: readonly string[]): string | undefined {
  const normalise = (value: string) => value.toLowerCase().replace(/[-_]/g, "");
  let best: { key: string; score: number } | undefined;
  for (const candidate of known) {
    const score = normalise(candidate) === normalise(key) ? 0 : distance(key.toLowerCase(), candidate.toLowerCase());
    if (best === undefined || score < best.score) best = { key: candidate, score };
  }
  if (best === undefined) return undefined;
  return best.score <= Math.max(2, Math.floor(key.length / 3)) ? best.key : undefined;
}

/** "unknown key 'x'; did you mean 'y'?" (or the list of known keys when nothing is close). */
export function unknownKeyMessage(key: string, known: readonly string[]): string {
  const suggestion = closestKey(key, known);
  return suggestion !== undefined
    ? `unknown key '${key}'; did you mean '${suggestion}'?`
    : `unknown key '${key}'; known keys here: ${known.join(", ")}`;
}
