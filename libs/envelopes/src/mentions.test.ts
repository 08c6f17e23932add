import { describe, expect, it } from "vitest";
import { MAX_MENTIONS, parseMentions } from "./mentions.js";

describe("parseMentions", () => {
  it("finds @names in order, once each, lower-cased", () => {
    expect(parseMentions("@alice review this, then @Bob and @alice again")).toEqual(["alice", "bob"]);
    expect(parseMentions("(@carol) @dave: @eve, @fred. @g_1-x!")).toEqual(["carol", "dave", "eve", "fred", "g_1-x"]);
    expect(parseMentions("@bob\n@cy")).toEqual(["bob", "cy"]);
  });

  it("does not read addresses or send targets as mentions", () => {
    expect(parseMentions("mail bob@example.com or send alice@review")).toEqual([]);
    expect(parseMentions("a@b @ c @@d @-x")).toEqual([]);
    expect(parseMentions("@alice@review")).toEqual([]);
    expect(parseMentions("npm i @types/node")).toEqual([]);
  });

  it("keeps no more than MAX_MENTIONS names", () => {
    const text = Array.from({ length: MAX_MENTIONS + 5 }, (_, index) => `@m${index}`).join(" ");
    const names = parseMentions(text);
    expect(names).toHaveLength(MAX_MENTIONS);
    expect(names[0]).toBe("m0");
  });
});
