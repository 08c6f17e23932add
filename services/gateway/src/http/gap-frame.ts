/**
 * Why a resuming SSE client does not get everything after its Last-Event-ID:
 * - `unknown_event_id`: the id is past the last one the stream holds (not one it sent: kept from before
 *   the stream was recreated, or made up); it resumes from the stream's end.
 * - `messages_removed` (agent events): the messages after it were removed by MONIRO_OUT's limits; it
 *   resumes after them.
 */
export interface StreamGap {
  code: "unknown_event_id" | "messages_removed";
  message: string;
  /** The Last-Event-ID the client sent. */
  lastEventId: string;
  /** Where the stream resumes (the preamble's `id:`); null: from the start (an empty channel). */
  resumesAfter: string | null;
}

/**
 * `event: gap`, sent right after the preamble (before any replayed event) to a client whose
 * Last-Event-ID cannot be honoured, so a resume never skips events silently (docs/api.md).
 */
export function gapFrame(gap: StreamGap): Buffer {
  const data = JSON.stringify({
    error: { code: gap.code, message: gap.message },
    lastEventId: gap.lastEventId,
    resumesAfter: gap.resumesAfter,
  });
  return Buffer.from(`event: gap\ndata: ${data}\n\n`);
}
