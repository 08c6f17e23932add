import { z } from "zod";

/** Every error answer of the API: `{ error: { code, message, details? } }` (docs/api.md lists the codes). */
export const errorBodySchema = z.object({
  error: z.object({
    code: z.string(),
    message: z.string(),
    details: z.record(z.string(), z.unknown()).optional(),
  }),
});
export type ErrorBody = z.output<typeof errorBodySchema>;
