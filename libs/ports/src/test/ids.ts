import type { Ids } from "../ids.js";

const CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";

/**
 * Deterministic ids that are still valid ULIDs (26 Crockford base32
 * characters), so envelopes built with them pass schema validation:
 * `00000000000000000000000001`, `…02`, …
 */
export function sequentialIds(start = 1): Ids & { readonly issued: string[] } {
  let next = start;
  const issued: string[] = [];
  return {
    issued,
    newId() {
      let n = next++;
      let text = "";
      do {
        text = CROCKFORD[n % 32] + text;
        n = Math.floor(n / 32);
      } while (n > 0);
      const id = text.padStart(26, "0");
      issued.push(id);
      return id;
    },
  };
}
