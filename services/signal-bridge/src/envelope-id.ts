import { createHash } from "node:crypto";

const CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";

/**
 * The envelope id of one Signal message: a ULID whose time part is the
 * message's Signal timestamp and whose random part is a hash of the sender
 * and that timestamp. The same message seen twice (a reconnect, a second
 * bridge) gets the same id, so JetStream's duplicate window and the runner's
 * `dedupe:<id>` both drop the copy.
 */
export function signalEnvelopeId(sender: string, timestamp: number): string {
  let time = "";
  let rest = Math.max(0, Math.min(timestamp, 2 ** 48 - 1));
  for (let i = 0; i < 10; i++) {
    time = CROCKFORD[rest % 32] + time;
    rest = Math.floor(rest / 32);
  }
  const digest = createHash("sha256").update(`${sender}\n${timestamp}`).digest();
  let random = "";
  // 16 characters of 5 bits each: the first 80 bits of the digest.
  let bits = 0;
  let value = 0;
  for (let i = 0; random.length < 16; i++) {
    value = (value << 8) | (digest[i] ?? 0);
    bits += 8;
    while (bits >= 5 && random.length < 16) {
      bits -= 5;
      random += CROCKFORD[(value >> bits) & 31];
    }
    value &= (1 << bits) - 1;
  }
  return time + random;
}
