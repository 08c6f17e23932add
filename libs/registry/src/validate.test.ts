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
});
