import { type Command, Option } from "commander";
import { stringify } from "yaml";

export const OUTPUT_FORMATS = ["text", "json", "yaml"] as const;
export type OutputFormat = (typeof OUTPUT_FORMATS)[number];

/** Adds `-o, --output text|json|yaml` (every read command has it). */
export function withOutput(command: Command): Command {
  return command.addOption(
    new Option("-o, --output <format>", "output format").choices(OUTPUT_FORMATS).default("text"),
  );
}

/** The value as the chosen format: `text(value)` for text, else JSON (2-space) or YAML. */
export function render<T>(value: T, format: OutputFormat | undefined, text: (value: T) => string): string {
  if (format === "json") return `${JSON.stringify(value, null, 2)}\n`;
  if (format === "yaml") return stringify(value);
  const out = text(value);
  return out.endsWith("\n") || out === "" ? out : `${out}\n`;
}

/** Writes `render(...)` to stdout. */
export function print<T>(value: T, format: OutputFormat | undefined, text: (value: T) => string): void {
  process.stdout.write(render(value, format, text));
}

/** Rows as aligned columns (the first row is the header); the last column is not padded. */
export function table(rows: ReadonlyArray<ReadonlyArray<string>>): string {
  const widths: number[] = [];
  for (const row of rows) {
    row.forEach((cell, i) => {
      widths[i] = Math.max(widths[i] ?? 0, cell.length);
    });
  }
  return rows
    .map((row) => row.map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i] ?? 0))).join("  "))
    .join("\n");
}
