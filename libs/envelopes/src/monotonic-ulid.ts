import { encodeTime, incrementBase32 } from "ulid";

/** Crockford base32, as `ulid` encodes. */
const ENCODING = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";
const CODES = Array.from(ENCODING, (char) => char.charCodeAt(0));
const FIRST = CODES[0] as number;
const LAST = CODES[CODES.length - 1] as number;
/** A random part that cannot be incremented. */
const ALL_SET = String.fromCharCode(LAST).repeat(16);
/** The character code after each one's (`FIRST` after `LAST`, with a carry). */
const NEXT: number[] = [];
CODES.forEach((code, digit) => {
  NEXT[code] = CODES[(digit + 1) % CODES.length] as number;
});
/** The largest time a ULID holds (48 bits). */
const TIME_MAX = 2 ** 48 - 1;
const TIME_LEN = 10;
const LENGTH = 26;

/**
 * `ulid`'s `monotonicFactory(prng)`: the same ids for the same clock and PRNG,
 * the same errors. An id is the time and 16 random characters or, at or
 * before the last id's time, the last id plus one in its random part.
 * `ulid` builds each id by prepending one character at a time (and
 * increments with `indexOf` and `substr`); this keeps the 26 character codes
 * and makes the string in one call (issue 17: each event has a new id).
 */
export function monotonicUlid(prng: () => number): (seedTime?: number) => string {
  let lastTime = 0;
  let drawn = false;
  const chars: number[] = new Array<number>(LENGTH).fill(FIRST);
  return (seedTime) => {
    const seed = !seedTime || Number.isNaN(seedTime) ? Date.now() : seedTime;
    if (seed <= lastTime) {
      let index = LENGTH - 1;
      while (index >= TIME_LEN && chars[index] === LAST) index--;
      // No id before (a negative time: a TypeError), or all 80 random bits set: `ulid`'s own error, state kept.
      if (!drawn) return incrementBase32(undefined as unknown as string);
      if (index < TIME_LEN) return incrementBase32(ALL_SET);
      for (let carried = index + 1; carried < LENGTH; carried++) chars[carried] = FIRST;
      chars[index] = NEXT[chars[index] as number] as number;
      return validTime(lastTime) ? String.fromCharCode(...chars) : encodeTime(lastTime, TIME_LEN);
    }
    lastTime = seed;
    // As `ulid`: the first random draw is the last character.
    for (let index = LENGTH - 1; index >= TIME_LEN; index--)
      chars[index] = CODES[Math.floor(prng() * 32) % 32] as number;
    drawn = true;
    // A time `ulid` does not encode (fractional, too large): its own error, after the same state change.
    if (!validTime(seed)) return encodeTime(seed, TIME_LEN);
    let time = seed;
    for (let index = TIME_LEN - 1; index >= 0; index--) {
      const digit = time % 32;
      chars[index] = CODES[digit] as number;
      time = (time - digit) / 32;
    }
    return String.fromCharCode(...chars);
  };
}

function validTime(time: number): boolean {
  return Number.isInteger(time) && time >= 0 && time <= TIME_MAX;
}
