/**
 * A message body: bytes as given, anything else as its JSON in UTF-8.
 * `Buffer.from` over `TextEncoder.encode`: the same bytes (JSON.stringify
 * leaves no lone surrogate to replace), cheaper for the small bodies of
 * events and envelopes (issue 17: Node copies them out of a pooled slab).
 */
export function encodePayload(payload: unknown): Uint8Array {
  if (payload instanceof Uint8Array) return payload;
  // Undefined (and a function): no JSON, an empty body, as TextEncoder gave.
  const json: string | undefined = JSON.stringify(payload);
  return Buffer.from(json ?? "");
}
