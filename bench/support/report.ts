/**
 * What each benchmark prints: one table per benchmark with the goal next to
 * the figure. PASS/MISS is information for the reader, never an exit code.
 */
export interface Row {
  metric: string;
  value: string;
  goal?: string;
  /** true = goal met, false = missed, undefined = no goal (context figure). */
  met?: boolean;
}

export interface Table {
  benchmark: string;
  title: string;
  rows: Row[];
  notes: string[];
}

const tables: Table[] = [];

/** Prints the table and keeps it for the run's summary. */
export function report(table: Table): void {
  tables.push(table);
  const width = Math.max(30, ...table.rows.map((row) => row.metric.length));
  const valueWidth = Math.max(10, ...table.rows.map((row) => row.value.length));
  const goalWidth = Math.max(6, ...table.rows.map((row) => (row.goal ?? "").length));
  const out: string[] = ["", `== ${table.title} (${table.benchmark})`];
  out.push(`${"metric".padEnd(width)}  ${"figure".padStart(valueWidth)}  ${"goal".padEnd(goalWidth)}  verdict`);
  out.push("-".repeat(width + valueWidth + goalWidth + 15));
  for (const row of table.rows) {
    const verdict = row.met === undefined ? "" : row.met ? "PASS" : "MISS";
    out.push(
      `${row.metric.padEnd(width)}  ${row.value.padStart(valueWidth)}  ${(row.goal ?? "").padEnd(goalWidth)}  ${verdict}`,
    );
  }
  for (const note of table.notes) out.push(`  note: ${note}`);
  process.stdout.write(`${out.join("\n")}\n`);
}

export function reportedTables(): readonly Table[] {
  return tables;
}

export function ms(value: number): string {
  if (!Number.isFinite(value)) return "n/a";
  return value >= 100
    ? `${value.toFixed(0)} ms`
    : value >= 1
      ? `${value.toFixed(2)} ms`
      : `${(value * 1000).toFixed(0)} µs`;
}

export function bytes(value: number): string {
  const abs = Math.abs(value);
  if (abs >= 1024 * 1024) return `${(value / 1024 / 1024).toFixed(1)} MiB`;
  if (abs >= 1024) return `${(value / 1024).toFixed(1)} KiB`;
  return `${value.toFixed(0)} B`;
}

/** The run's tables as Markdown (for docs/performance.md): one table per benchmark, then a summary of the goals. */
export function markdown(): string {
  const escapeHtml = (text: string) => text.replace(/</g, "&lt;").replace(/>/g, "&gt;");
  // Leading spaces mark a sub-row in the terminal; Markdown would drop them.
  const cell = (text: string) =>
    escapeHtml(text)
      .replace(/\|/g, "\\|")
      .replace(/^ {2}(?=\S)/, "· ")
      .trim();
  const out: string[] = [];
  for (const table of tables) {
    out.push(`### ${table.title}`, "", "| metric | figure | goal | |", "|---|---|---|---|");
    for (const row of table.rows) {
      const verdict = row.met === undefined ? "" : row.met ? "PASS" : "MISS";
      out.push(`| ${cell(row.metric)} | ${cell(row.value)} | ${cell(row.goal ?? "")} | ${verdict} |`);
    }
    out.push("");
    for (const note of table.notes) out.push(`- ${escapeHtml(note)}`);
    out.push("");
  }
  out.push("### Goals", "", "| benchmark | metric | figure | goal | |", "|---|---|---|---|---|");
  for (const table of tables) {
    for (const row of table.rows.filter((r) => r.met !== undefined)) {
      out.push(
        `| ${table.benchmark} | ${cell(row.metric)} | ${cell(row.value)} | ${cell(row.goal ?? "")} | ${row.met ? "PASS" : "MISS"} |`,
      );
    }
  }
  return `${out.join("\n")}\n`;
}
