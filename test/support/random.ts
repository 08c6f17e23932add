import { randomBytes } from "node:crypto";

/** A short random token for namespaces, prefixes and names owned by one test. */
export function randomToken(prefix = "t"): string {
  return `${prefix}${randomBytes(5).toString("hex")}`;
}
