/** Last N lines of a byte stream (combined stdout+stderr of a background process). */
export class LineRing {
  private readonly lines: string[] = [];
  private partial = "";
  private dropped = 0;

  constructor(private readonly capacity: number) {}

  push(chunk: string): void {
    const parts = (this.partial + chunk).split("\n");
    this.partial = parts.pop() ?? "";
    for (const line of parts) this.add(line);
    // A single huge line without newline must not grow without bound.
    if (this.partial.length > 64_000) {
      this.add(this.partial);
      this.partial = "";
    }
  }

  private add(line: string): void {
    this.lines.push(line.length > 4_000 ? `${line.slice(0, 4_000)}…[line cut]` : line);
    if (this.lines.length > this.capacity) {
      this.lines.shift();
      this.dropped += 1;
    }
  }

  /** The last `count` lines, including an unfinished last line. */
  tail(count: number): string[] {
    const all = this.partial === "" ? this.lines : [...this.lines, this.partial];
    return all.slice(Math.max(0, all.length - count));
  }

  get droppedLines(): number {
    return this.dropped;
  }
}
