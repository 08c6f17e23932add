import { z } from "zod";
import { unknownKeyMessage } from "./closest-key.js";

/**
 * An object schema that rejects unknown keys with an issue per key naming the
 * closest known one. Unlike `z.strictObject`, the unknown keys are reported
 * together with every other problem of the same object, and the message says
 * what was probably meant.
 */
export function strictObject<Shape extends z.ZodRawShape>(shape: Shape) {
  const known = Object.keys(shape);
  return z
    .looseObject(shape)
    .check(
      z.superRefine(
        (value: Record<string, unknown>, ctx) => {
          for (const key of Object.keys(value)) {
            if (!known.includes(key)) {
              ctx.addIssue({ code: "custom", path: [key], message: unknownKeyMessage(key, known), input: value[key] });
            }
          }
        },
        { when: (payload) => typeof payload.value === "object" && payload.value !== null },
      ),
    )
    .transform((value) => {
      const known_: Record<string, unknown> = {};
      for (const key of known) if (key in value) known_[key] = value[key];
      return known_ as z.output<z.ZodObject<Shape>>;
    });
}

/** A field that accepts a shorthand scalar (`queue: steer`) for an object (`queue: { mode: steer }`). */
export function withShorthand<S extends z.ZodType>(key: string, schema: S) {
  return z.preprocess((value) => (typeof value === "string" ? { [key]: value } : value), schema);
}
