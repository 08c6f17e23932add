import { MentionsNotDeliveredError } from "@moniro/store";
import { describe, expect, it } from "vitest";
import { HttpError } from "./http-error.js";
import { mentionsNotDelivered } from "./mentions-not-delivered.js";

describe("a channel post stored whose mentions did not all wake", () => {
  it("answers 503 naming the stored post and whom it did not wake, without Retry-After (a retry would post twice)", () => {
    const post = { id: "01JDX", mentions: ["bob"], unreached: [] };
    const error = mentionsNotDelivered(new MentionsNotDeliveredError(post, [{ member: "bob", error: "NATS is away" }]));
    expect(error).toBeInstanceOf(HttpError);
    expect(error).toMatchObject({
      status: 503,
      code: "nats_unavailable",
      message: expect.stringMatching(
        /^the post is stored as 01JDX \(do not post it again\), but waking @bob failed: NATS is away/,
      ),
    });
    expect(error?.headers ?? {}).not.toHaveProperty("Retry-After");
    expect(mentionsNotDelivered(new Error("other"))).toBeUndefined();
  });
});
