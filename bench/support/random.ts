import { randomBytes } from "node:crypto";

/** A short random token for the namespaces, key prefixes and names one benchmark owns. */
export function randomToken(prefix = "b"): string {
  return `${prefix}${randomBytes(5).toString("hex")}`;
}
