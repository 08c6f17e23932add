import { parseJson } from "@moniro/envelopes";
import { z } from "zod";

export const MEMORY_KINDS = ["decision", "pattern", "outcome"] as const;

const answerSchema = z.object({
  memories: z.array(
    z.object({
      kind: z.enum(MEMORY_KINDS),
      key: z.string().min(1),
      value: z.string().min(1),
    }),
  ),
});

export interface ExtractedMemory {
  /** `<kind>:<key>`, e.g. `decision:auth-pattern` (seed 004: decisions, patterns, work log). */
  key: string;
  value: string;
}

const MAX_VALUE_CHARS = 1_000;

/** `auth Pattern!` → `auth-pattern`; at most 80 characters. */
function slug(key: string): string {
  return key
    .toLowerCase()
    .replace(/[^a-z0-9_.-]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 80);
}

/**
 * The model's answer as memories to write, or why it is not usable. Text
 * around the JSON object (a preface, a code fence) is ignored; at most
 * `maxEntries` are kept; a key already taken in this answer keeps its first value.
 */
export function parseExtraction(
  text: string,
  maxEntries: number,
): { ok: true; memories: ExtractedMemory[] } | { ok: false; reason: string } {
  const start = text.indexOf("{");
  const end = text.lastIndexOf("}");
  if (start === -1 || end < start) return { ok: false, reason: "the answer holds no JSON object" };
  const parsed = parseJson(text.slice(start, end + 1));
  if (!parsed.ok) return { ok: false, reason: `the answer is not valid JSON (${parsed.error.message})` };
  const checked = answerSchema.safeParse(parsed.value);
  if (!checked.success) {
    return {
      ok: false,
      reason: `the answer is not {"memories":[{kind,key,value}]} (${checked.error.issues[0]?.message})`,
    };
  }
  const memories = new Map<string, string>();
  for (const memory of checked.data.memories) {
    const key = slug(memory.key);
    if (key === "" || memories.has(`${memory.kind}:${key}`)) continue;
    memories.set(`${memory.kind}:${key}`, memory.value.trim().slice(0, MAX_VALUE_CHARS));
    if (memories.size >= maxEntries) break;
  }
  return { ok: true, memories: [...memories].map(([key, value]) => ({ key, value })) };
}
