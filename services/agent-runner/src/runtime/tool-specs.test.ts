import { specsForPolicy } from "@moniro/tool-catalog";
import { describe, expect, it } from "vitest";
import { MESSAGING_CONTRACT } from "../loop/index.js";
import { ToolPolicyError, toolSpecsFor } from "./tool-specs.js";

const names = (specs: { name: string }[]) => specs.map((spec) => spec.name);

describe("toolSpecsFor", () => {
  it("gives message and skip first, then the catalog's full profile by default", () => {
    const specs = toolSpecsFor();
    expect(names(specs).slice(0, 2)).toEqual(["message", "skip"]);
    expect(names(specs).slice(2)).toEqual(names(specsForPolicy()).filter((name) => name !== "message"));
  });

  it("follows the agent's tools policy, keeping message and skip even when denied", () => {
    const specs = toolSpecsFor([], { profile: "coding", deny: ["exec", "message"] });
    expect(names(specs)).toContain("read");
    expect(names(specs)).not.toContain("exec");
    expect(names(specs)).not.toContain("cron");
    expect(names(specs).slice(0, 2)).toEqual(["message", "skip"]);
    expect(names(toolSpecsFor([], { subagent: true }))).not.toContain("write");
  });

  it("an explicit spec list wins over the policy", () => {
    const custom = { name: "custom", description: "x", inputSchema: { type: "object" } };
    expect(names(toolSpecsFor([custom], { profile: "readonly" }))).toEqual(["message", "skip", "custom"]);
  });

  it("keeps every tool spec and the messaging contract within Latin-1, so request bodies stay one-byte strings", () => {
    // One character beyond U+00FF anywhere in the prompt makes V8 build the whole JSON body as a two-byte
    // string: twice the bytes to encode and copy, on every LLM call of every agent.
    const beyondLatin1 = (text: string) => [...text].filter((char) => (char.codePointAt(0) ?? 0) > 0xff);
    for (const spec of toolSpecsFor()) expect(beyondLatin1(JSON.stringify(spec)), spec.name).toEqual([]);
    expect(beyondLatin1(MESSAGING_CONTRACT)).toEqual([]);
  });

  it("a bad tools block names the field", () => {
    expect(() => toolSpecsFor([], { profile: "root" })).toThrow(ToolPolicyError);
    expect(() => toolSpecsFor([], { deny: ["reed"] })).toThrow(/tools\.deny\.0: unknown tool 'reed'/);
  });
});
