const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** `90s`, `5m`, `1h`, `2d`, `1500ms` or a bare number of milliseconds → ms; undefined when not a duration. */
export function parseDuration(text: string): number | undefined {
  const match = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?\s*$/.exec(text);
  if (!match) return undefined;
  const ms = Number(match[1]) * (UNITS[match[2] ?? "ms"] ?? 1);
  return Number.isFinite(ms) && ms > 0 ? Math.round(ms) : undefined;
}

/** A duration for people: 1500 → `1.5s`, 3600000 → `1h`. */
export function formatDuration(ms: number): string {
  for (const [unit, size] of [
    ["d", 86_400_000],
    ["h", 3_600_000],
    ["m", 60_000],
    ["s", 1000],
  ] as const) {
    if (ms >= size && ms % (size / 10) === 0) return `${ms / size}${unit}`;
  }
  return `${ms}ms`;
}
