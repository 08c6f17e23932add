/** Percentile summary of a sample of durations (ms). */
export interface Summary {
  n: number;
  p50: number;
  p99: number;
  mean: number;
}

export function summarize(samples: readonly number[]): Summary {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
  const mean = sorted.reduce((sum, x) => sum + x, 0) / Math.max(1, sorted.length);
  return { n: sorted.length, p50: at(0.5), p99: at(0.99), mean };
}

export function fmt(ms: number): string {
  return ms >= 100 ? `${ms.toFixed(0)} ms` : ms >= 1 ? `${ms.toFixed(2)} ms` : `${(ms * 1000).toFixed(0)} µs`;
}

export function line(label: string, summary: Summary): string {
  return `${label.padEnd(48)} p50 ${fmt(summary.p50).padStart(9)}   p99 ${fmt(summary.p99).padStart(9)}   (n=${summary.n})`;
}

/** High-resolution time in ms. */
export function now(): number {
  return performance.now();
}
