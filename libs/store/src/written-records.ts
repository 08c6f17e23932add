import type { InboxRecord } from "./codec.js";

/**
 * The inbox records this process wrote lately, keyed by their exact bytes, so
 * that reading one back (the wake's first drain, the checkpoint's) needs no
 * JSON parse and no schema parse of its envelope: bytes equal to what was
 * written are the typed record that was written (issue 17, as WrittenEntries
 * for thread entries). The envelope came through the inbound schema (ingest)
 * or from an item read before. Anything else read is decoded and checked as
 * ever. Bounded (the oldest go first; larger records are not kept).
 */
export class WrittenRecords {
  private readonly records = new Map<string, InboxRecord>();

  constructor(
    private readonly max = 256,
    private readonly maxJsonLength = 8_192,
  ) {}

  remember(json: string, record: InboxRecord): void {
    if (this.max <= 0 || json.length > this.maxJsonLength) return;
    this.records.delete(json);
    this.records.set(json, record);
    if (this.records.size > this.max) {
      const oldest = this.records.keys().next().value;
      if (oldest !== undefined) this.records.delete(oldest);
    }
  }

  /** The record written with exactly these bytes (kept: an item is read at every drain until acked). */
  get(json: string): InboxRecord | undefined {
    return this.records.get(json);
  }

  get size(): number {
    return this.records.size;
  }
}
