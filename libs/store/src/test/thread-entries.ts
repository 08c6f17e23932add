import type { ThreadEntryData } from "@moniro/envelopes";

/** A personal-context input entry of `http:bob` with `text` (cycle c1), for tests of thread code. */
export function inputEntry(text: string): ThreadEntryData {
  return {
    kind: "input",
    cycleId: "c1",
    ts: 1,
    envelopeId: "01J00000000000000000000000",
    source: "http:bob",
    replyTo: "http:bob",
    context: "personal",
    lane: "immediate",
    text,
    attachments: [],
  };
}
