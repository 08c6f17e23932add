import { describe, expect, it } from "vitest";
import type { z } from "zod";
import { allToolSpecs, toolCatalog, toolNames } from "./catalog.js";

describe("the tool specs the model sees", () => {
  it("name every input field zod accepts, require exactly the fields zod requires, and describe each tool", () => {
    expect(allToolSpecs().map((spec) => spec.name)).toEqual([...toolNames]);
    for (const spec of allToolSpecs()) {
      const definition = toolCatalog.get(spec.name);
      if (!definition) throw new Error(`no catalog entry for the spec '${spec.name}'`);
      const shape = (definition.input as z.ZodObject<z.ZodRawShape>).shape;
      const required = Object.entries(shape)
        .filter(([, field]) => !(field as z.ZodType).safeParse(undefined).success)
        .map(([name]) => name);
      const schema = spec.inputSchema as { properties?: Record<string, unknown>; required?: string[] };
      expect(Object.keys(schema.properties ?? {}).sort(), spec.name).toEqual(Object.keys(shape).sort());
      expect([...(schema.required ?? [])].sort(), spec.name).toEqual(required.sort());
      expect(spec.description.length, spec.name).toBeGreaterThan(20);
    }
  });

  it("spell out the choices: process and cron actions are enums", () => {
    const property = (tool: string, field: string) => {
      const spec = allToolSpecs().find((candidate) => candidate.name === tool);
      if (!spec) throw new Error(`no tool spec named '${tool}'`);
      return (spec.inputSchema as { properties: Record<string, unknown> }).properties[field];
    };
    expect(property("process", "action")).toMatchObject({
      enum: ["start", "list", "poll", "log", "write", "kill"],
    });
    expect(property("cron", "action")).toMatchObject({ enum: ["create", "list", "delete"] });
    expect(property("edit", "replace_all")).toMatchObject({ type: "boolean" });
  });
});
