import { randomFillSync } from "node:crypto";

const POOL_SIZE = 4096;
const pool = new Uint8Array(POOL_SIZE);
let next = POOL_SIZE;

/**
 * A cryptographically random float in [0, 1) with 8 bits of entropy, the
 * PRNG `ulid` asks for once per character. Its default makes one
 * `crypto.getRandomValues` call per character (16 per id, a tenth of the
 * tool-executor's CPU per call); this draws from a pool refilled 4 KiB at a
 * time. 256 is a multiple of 32, so `floor(x * 32)` stays uniform.
 */
export function pooledRandom(): number {
  if (next === POOL_SIZE) {
    randomFillSync(pool);
    next = 0;
  }
  return (pool[next++] as number) / 256;
}
