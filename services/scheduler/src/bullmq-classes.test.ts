import * as bullmq from "bullmq";
import { describe, expect, it } from "vitest";
import { Queue, UnrecoverableError, Worker } from "./bullmq-classes.js";

describe("bullmq-classes", () => {
  it("gives the very classes the bullmq package exports", () => {
    expect(Queue).toBe(bullmq.Queue);
    expect(Worker).toBe(bullmq.Worker);
    expect(UnrecoverableError).toBe(bullmq.UnrecoverableError);
  });
});
