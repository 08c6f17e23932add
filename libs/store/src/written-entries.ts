import type { ThreadEntry, ThreadEntryData } from "@moniro/envelopes";

/**
 * The thread entries this process appended lately, with the exact bytes it
 * stored, so that reading one back (the next run's tail brings what the last
 * run wrote) needs no JSON parse and no schema parse: bytes equal to what was
 * written are the typed entry that was written (issue 17: a parse per entry
 * per run on the runner's path). Anything else read, or bytes that differ,
 * is decoded and checked as ever. Bounded (512 entries of at most 8 Ki
 * characters, the oldest go first: a few MiB at most); an entry is forgotten
 * once read back.
 */
export class WrittenEntries {
  private readonly entries = new Map<string, { json: string; entry: ThreadEntryData }>();

  constructor(
    private readonly max = 512,
    /** Larger entries are not kept (a long tool result): they are rare, and memory matters more. */
    private readonly maxJsonLength = 8_192,
  ) {}

  remember(stream: string, entryId: string, json: string, entry: ThreadEntryData): void {
    if (this.max <= 0 || json.length > this.maxJsonLength) return;
    this.entries.set(`${stream}\u0000${entryId}`, { json, entry });
    if (this.entries.size > this.max) {
      const oldest = this.entries.keys().next().value;
      if (oldest !== undefined) this.entries.delete(oldest);
    }
  }

  /** The entry written with exactly these bytes under this id (a shallow copy), or undefined. */
  take(stream: string, entryId: string, json: string): ThreadEntry | undefined {
    const key = `${stream}\u0000${entryId}`;
    const written = this.entries.get(key);
    if (written === undefined) return undefined;
    this.entries.delete(key);
    return written.json === json ? ({ ...written.entry, entryId } as ThreadEntry) : undefined;
  }

  get size(): number {
    return this.entries.size;
  }
}
