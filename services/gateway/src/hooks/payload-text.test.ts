import { compileTemplate } from "@moniro/config";
import { describe, expect, it } from "vitest";
import { bounded, payloadText } from "./payload-text.js";

const facts = { $hook: "gh", $event: "push" };

describe("payloadText", () => {
  it("fills a template from the payload: strings as they are, numbers and booleans as text, objects as JSON, missing as nothing", () => {
    const template = compileTemplate(
      "{{ $hook }}/{{ $event }}: {{ repo.name }} #{{ n }} ok={{ ok }} {{ commits[1].id }} {{ tags }} [{{ missing.deep }}] [{{ $delivery }}]",
    );
    const payload = { repo: { name: "moniro" }, n: 7, ok: false, commits: [{ id: "a" }, { id: "b" }], tags: ["x", 1] };
    expect(payloadText(payload, { template, facts, maxChars: 4000 })).toBe(
      'gh/push: moniro #7 ok=false b ["x",1] [] []',
    );
  });

  it("reads only the payload's own fields, never a prototype (a list's length is its own)", () => {
    const template = compileTemplate("[{{ constructor }}][{{ a.__proto__ }}][{{ a.toString }}][{{ list.length }}]");
    expect(payloadText({ a: {}, list: [1, 2] }, { template, facts, maxChars: 100 })).toBe("[][][][2]");
  });

  it("drops control and format characters from inserted strings, keeping line breaks and tabs", () => {
    const template = compileTemplate("{{ title }}");
    const title = "fix\u202Eevil\u200B\u0007 bug\nsecond line\tend";
    expect(payloadText({ title }, { template, facts, maxChars: 100 })).toBe("fixevil bug\nsecond line\tend");
  });

  it("renders the payload as compact JSON without a template, and says when a body was empty", () => {
    expect(payloadText({ status: "success", commit: "abc1234" }, { facts, maxChars: 100 })).toBe(
      '{"status":"success","commit":"abc1234"}',
    );
    expect(payloadText(undefined, { facts, maxChars: 100 })).toBe("(empty body)");
  });

  it("bounds the text, with a marker saying how much was cut", () => {
    const text = payloadText({ log: "z".repeat(10_000) }, { facts, maxChars: 200 });
    expect(text.length).toBeLessThanOrEqual(200);
    expect(text).toMatch(/^\{"log":"z+ … \[cut: \d+ more characters\]$/);
    const repeated = payloadText(
      { big: "q".repeat(5000) },
      { template: compileTemplate("{{ big }}".repeat(1000)), facts, maxChars: 300 },
    );
    expect(repeated.length).toBeLessThanOrEqual(300);
  });

  it("never cuts a surrogate pair in half", () => {
    const text = `${"a".repeat(30)}${"😀".repeat(40)}`;
    for (let maxChars = 40; maxChars < 90; maxChars++) {
      const cut = bounded(text, maxChars);
      expect(cut.length).toBeLessThanOrEqual(maxChars);
      // A lone high surrogate would be re-encoded as U+FFFD: the text survives a UTF-8 round trip intact.
      expect(Buffer.from(cut, "utf8").toString("utf8")).toBe(cut);
    }
  });
});
