import { describe, expect, it } from "vitest";
import { redisAclRules } from "./redis-acl.js";

describe("redisAclRules", () => {
  it("gives the key prefix, no channels, and every command but @dangerous with the three the services use", () => {
    expect(redisAclRules("team-a:")).toEqual([
      "~team-a:*",
      "resetchannels",
      "+@all",
      "-@dangerous",
      "+info",
      "+client|id",
      "+client|unblock",
    ]);
    expect(redisAclRules()[0]).toBe("~moniro:*");
  });

  it("refuses a prefix that would be a wider pattern, naming it", () => {
    for (const prefix of ["", "a*", "a?", "a[b]", "a b", "a\\b"]) {
      expect(() => redisAclRules(prefix)).toThrow(`the Redis key prefix '${prefix}' cannot be an ACL key pattern`);
    }
  });
});
