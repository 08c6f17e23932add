import { describe, expect, it } from "vitest";
import { RegistryInvalidError } from "./errors.js";
import { validateDefinition } from "./validate.js";

describe("validateDefinition: the inline agents of workflow instances", () => {
  it("takes <workflow>__<tag>__<key> from source workflow, keeping the instance name", () => {
    const definition = validateDefinition("review__pr-7__helper", { model: "m" }, { source: "workflow" });
    expect(definition.name).toBe("review__pr-7__helper");
  });

  it("refuses such a name from any other source, and another shape from source workflow", () => {
    expect(() => validateDefinition("review__pr-7__helper", { model: "m" }, { source: "api" })).toThrow(
      /may not contain '__'/,
    );
    expect(() => validateDefinition("review__helper", { model: "m" }, { source: "workflow" })).toThrow(
      RegistryInvalidError,
    );
  });

  it("refuses '--' anywhere in the name: sub-agents (<parent>--<id>) are never definitions", () => {
    // `code--review__main__helper` would run as a sub-agent of `code`: its policy, its workspace, its seat.
    for (const [name, source] of [
      ["code--review__main__helper", "workflow"],
      ["review__pr--1__helper", "workflow"],
      ["code--x1y2z3w4", "api"],
    ] as const) {
      const error = (() => {
        try {
          validateDefinition(name, { model: "m" }, { source });
        } catch (caught) {
          return caught as RegistryInvalidError;
        }
        throw new Error(`'${name}' was accepted`);
      })();
      expect(error).toBeInstanceOf(RegistryInvalidError);
      expect(error.issues).toEqual([
        expect.objectContaining({ path: "name", message: expect.stringMatching(/may not contain '--'.*sub-agents/) }),
      ]);
    }
  });
});
