import { monotonicFactory } from "ulid";
import { describe, expect, it } from "vitest";
import { monotonicUlid } from "./monotonic-ulid.js";

/** A PRNG replayed from a list (then a linear congruential sequence), so both factories draw the same. */
function replay(values: readonly number[] = []): () => number {
  let index = 0;
  let state = 12345;
  return () => {
    const value = values[index++];
    if (value !== undefined) return value;
    state = (state * 1103515245 + 12345) % 2147483648;
    return state / 2147483648;
  };
}

/** Calls both factories with the same times; they must give the same ids and throw the same errors. */
function expectSameAsUlid(times: readonly (number | undefined)[], values?: readonly number[]): string[] {
  const ours = monotonicUlid(replay(values));
  const theirs = monotonicFactory(replay(values));
  const ids: string[] = [];
  for (const time of times) {
    let expected: string | Error;
    try {
      expected = theirs(time);
    } catch (error) {
      expected = error as Error;
    }
    if (expected instanceof Error) {
      expect(() => ours(time)).toThrow(expected.constructor as new () => Error);
      expect(() => ours(time)).toThrow(expected.message);
      continue;
    }
    const id = ours(time);
    expect(id).toBe(expected);
    ids.push(id);
  }
  return ids;
}

const T = 1_780_000_000_000;

describe("monotonicUlid", () => {
  it("gives ulid's ids: new times, repeated times (incremented), a clock going back", () => {
    const ids = expectSameAsUlid([T, T, T, T + 1, T + 1, T + 5, T + 3, T + 5, T + 6, 1, 281474976710655]);
    expect(ids).toHaveLength(11);
    expect(ids.slice(0, 9)).toEqual([...ids.slice(0, 9)].sort());
  });

  it("carries an increment over random characters at their largest", () => {
    // Draws of 31/32 give `Z`: the last three random characters are Z, then 0 and Z's before them.
    const draws = [31 / 32, 31 / 32, 31 / 32, 0, ...Array(12).fill(0.999)];
    const ids = expectSameAsUlid([T, T, T, T - 10], draws);
    expect(ids[1]?.slice(-4)).toBe("1000");
  });

  it("throws ulid's errors: all random bits set, a first time before 1970, fractional and too large times", () => {
    // Each returns the ids both gave; the other calls threw the same error in both.
    expect(expectSameAsUlid([T, T, T], Array(16).fill(31 / 32))).toHaveLength(1);
    expect(expectSameAsUlid([-5, T, T])).toHaveLength(2);
    expect(expectSameAsUlid([T, T + 0.5, T + 0.2, T + 1, T + 2])).toHaveLength(3);
    expect(expectSameAsUlid([T, 2 ** 48, T, 2 ** 49])).toHaveLength(1);
  });

  it("takes Date.now() for no time, 0 and NaN", () => {
    const ids = expectSameAsUlid([T]);
    const next = monotonicUlid(replay());
    for (const time of [undefined, 0, Number.NaN]) {
      const id = next(time);
      expect(id).toMatch(/^[0-9A-HJKMNP-TV-Z]{26}$/);
      expect(id.slice(0, 10) >= (ids[0] ?? "").slice(0, 10) || Date.now() < T).toBe(true);
    }
  });

  it("matches ulid over a long run of mostly repeated times", () => {
    const times: number[] = [];
    let time = T;
    for (let i = 0; i < 5000; i++) {
      if (i % 9 === 0) time += 1 + (i % 3);
      times.push(i % 97 === 0 ? time - 2 : time);
    }
    expectSameAsUlid(times);
  });
});
