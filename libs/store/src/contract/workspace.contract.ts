import { FakeClock } from "@moniro/ports/test";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { WorkspaceLimits } from "../workspace/workspace-context.js";
import { WorkspaceError } from "../workspace/workspace-error.js";
import type { NamedMember, Workspace, WorkspaceStore } from "../workspace/workspace-port.js";

export interface WorkspaceHarnessOptions {
  clock: FakeClock;
  limits: Partial<WorkspaceLimits>;
}

export interface WorkspaceHarness {
  store: WorkspaceStore;
  cleanup(): Promise<void>;
}

const MEMBERS: NamedMember[] = [
  { name: "alice", agent: "alice", kind: "ref", role: "reviewer" },
  { name: "bob", agent: "bob", kind: "ref" },
  { name: "helper", agent: "review__main__helper", kind: "inline" },
];

async function refusal(promise: Promise<unknown>): Promise<WorkspaceError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  if (!(error instanceof WorkspaceError)) throw new Error(`expected a WorkspaceError, got ${error}`);
  return error;
}

/**
 * What every WorkspaceStore does (docs/workflows.md "The workspace store"), run
 * against RedisWorkspaceStore on real Redis and against InMemoryWorkspaceStore.
 */
export function describeWorkspaceContract(
  label: string,
  open: (options: WorkspaceHarnessOptions) => WorkspaceHarness,
): void {
  describe(`workspace store contract${label}`, () => {
    let harness: WorkspaceHarness;
    let clock: FakeClock;
    let store: WorkspaceStore;
    let review: Workspace;
    beforeEach(async () => {
      clock = new FakeClock({ start: 1_732_600_000_000 });
      harness = open({ clock, limits: { maxPostChars: 200, maxDocumentBytes: 64, maxDocuments: 2 } });
      store = harness.store;
      review = store.instance("review", "main");
      await review.start(MEMBERS);
    });
    afterEach(async () => {
      await harness.cleanup();
    });

    describe("instance lifecycle", () => {
      it("starts once, lists the instance with its members, stops once", async () => {
        clock.advance(5);
        expect(await review.start(MEMBERS)).toEqual({ started: false });
        expect(await review.state()).toEqual({
          workflow: "review",
          tag: "main",
          status: "running",
          createdAt: 1_732_600_000_000,
          startedAt: 1_732_600_000_000,
          members: [
            { name: "alice", agent: "alice", kind: "ref", role: "reviewer" },
            { name: "bob", agent: "bob", kind: "ref" },
            { name: "helper", agent: "review__main__helper", kind: "inline" },
          ],
        });
        expect(await review.stop()).toEqual({ stopped: true });
        expect(await review.stop()).toEqual({ stopped: false });
        expect(await store.list()).toMatchObject([
          { workflow: "review", tag: "main", status: "stopped", stoppedAt: 1_732_600_000_005 },
        ]);
        expect(await store.instance("review", "other").state()).toBeNull();
      });

      it("concurrent starts and stops leave one consistent state: every transition counted once", async () => {
        const calls = Array.from({ length: 40 }, (_, index) =>
          index % 2 === 0
            ? review.stop().then((r) => (r.stopped ? "stop" : ""))
            : review.start(MEMBERS).then((r) => (r.started ? "start" : "")),
        );
        const done = await Promise.all(calls);
        const stops = done.filter((call) => call === "stop").length;
        const starts = done.filter((call) => call === "start").length;
        const state = await review.state();
        // It was running: each effective stop is followed by at most one effective start.
        expect(stops - starts).toBe(state?.status === "running" ? 0 : 1);
        expect(state?.members.map((member) => member.name)).toEqual(["alice", "bob", "helper"]);
        expect(state?.createdAt).toBe(1_732_600_000_000);
      });

      it("a stopped instance takes no posts, documents or votes, and says how to start it", async () => {
        await review.stop();
        const error = await refusal(review.channel.post({ from: "alice", text: "hello" }));
        expect(error.code).toBe("workflow_not_running");
        expect(error.message).toBe('workflow "review" is not running.');
        expect(error.hint).toBe("Start it with: moniro start review");
        const tagged = store.instance("review", "pr-1");
        expect((await refusal(tagged.documents.write("a.md", "x", { by: "alice" }))).message).toBe(
          'workflow "review:pr-1" is not running.',
        );
        expect((await refusal(review.proposals.create({ title: "Ship?", by: "alice" }))).code).toBe(
          "workflow_not_running",
        );
      });

      it("a kept instance resumes with its channel and the members given at the new start", async () => {
        await review.channel.post({ from: "alice", text: "before" });
        await review.stop();
        clock.advance(1000);
        expect(await review.start([{ name: "carol", agent: "carol", kind: "ref" }])).toEqual({ started: true });
        const state = await review.state();
        expect(state).toMatchObject({ createdAt: 1_732_600_000_000, startedAt: 1_732_600_001_000, status: "running" });
        expect(state?.stoppedAt).toBeUndefined();
        expect(state?.members.map((member) => member.name)).toEqual(["carol"]);
        expect((await review.channel.read()).entries.map((entry) => entry.text)).toEqual(["before"]);
      });

      it("discards everything of a stopped instance, and refuses while it runs", async () => {
        await review.channel.post({ from: "alice", text: "@bob hi" });
        await review.documents.write("plan.md", "x", { by: "alice" });
        const proposal = await review.proposals.create({ title: "Ship?", by: "alice" });
        await review.proposals.vote({ id: proposal.id, voter: "bob", option: "yes" });
        expect((await refusal(review.discard())).message).toBe(
          "review:main is running: stop it before discarding its workspace",
        );
        await review.stop();
        await review.discard();
        expect(await review.state()).toBeNull();
        expect(await store.list()).toEqual([]);
        expect(await review.channel.length()).toBe(0);
        expect(await review.documents.list()).toEqual([]);
        expect(await review.proposals.list()).toEqual([]);
        expect((await review.channel.inbox("bob")).unread).toBe(0);
      });

      it("refuses bad names, no members and a member listed twice", async () => {
        expect(() => store.instance("Review", "main")).toThrow("workflow 'Review' must be 1-63 characters");
        expect(() => store.instance("review", "a:b")).toThrow("tag 'a:b' must be");
        const other = store.instance("other", "main");
        expect((await refusal(other.start([]))).message).toBe("other:main needs at least one member to start");
        const twice = [MEMBERS[0], MEMBERS[0]] as NamedMember[];
        expect((await refusal(other.start(twice))).message).toBe("member 'alice' is listed twice");
      });
    });

    describe("the channel", () => {
      it("parses @mentions: members are notified, the sender is not, non-members are reported and the post kept", async () => {
        const result = await review.channel.post({ from: "alice", text: "@bob check line 42, @alice @carol @Helper" });
        expect(result).toMatchObject({ mentions: ["bob", "helper"], unreached: ["carol"] });
        const { entries } = await review.channel.read();
        expect(entries).toEqual([
          {
            id: result.id,
            from: "alice",
            text: "@bob check line 42, @alice @carol @Helper",
            mentions: ["bob", "helper"],
            at: 1_732_600_000_000,
          },
        ]);
        expect((await review.channel.inbox("bob")).entries.map((entry) => entry.id)).toEqual([result.id]);
        expect((await review.channel.inbox("alice")).unread).toBe(0);
      });

      it("takes posts from outside (a tag) and refuses a sender that is not a member, with the seed's message", async () => {
        const fromHttp = await review.channel.post({ from: "http:carol", text: "@alice look" });
        expect(fromHttp.mentions).toEqual(["alice"]);
        const error = await refusal(review.channel.post({ from: "mallory", text: "hi" }));
        expect(error.code).toBe("not_a_member");
        expect(error.message).toBe('mallory is not a participant in workflow "review".');
        expect(error.hint).toBe("Add mallory to .workflows/review.yaml first.");
        expect((await refusal(review.channel.post({ from: "a b", text: "x" }))).code).toBe("bad_member");
        expect(await review.channel.length()).toBe(1);
      });

      it("refuses an empty or oversized post, naming the limit and what to do instead", async () => {
        expect((await refusal(review.channel.post({ from: "alice", text: "  " }))).code).toBe("empty_post");
        expect((await refusal(review.channel.post({ from: "alice", text: "x".repeat(201) }))).message).toBe(
          "a channel post is at most 200 characters (this one has 201): put long text in a document (team_doc_write) and post its name",
        );
        expect(await review.channel.length()).toBe(0);
      });

      it("reads after a cursor, the last N, and names a bad cursor", async () => {
        const ids: string[] = [];
        for (const text of ["one", "two", "three", "four"])
          ids.push((await review.channel.post({ from: "bob", text })).id);
        const first = await review.channel.read({ limit: 2 });
        expect(first.entries.map((entry) => entry.text)).toEqual(["one", "two"]);
        expect(first.cursor).toBe(ids[1]);
        const rest = await review.channel.read({ after: first.cursor, limit: 10 });
        expect(rest.entries.map((entry) => entry.text)).toEqual(["three", "four"]);
        expect(await review.channel.read({ after: rest.cursor })).toEqual({ entries: [], cursor: ids[3] });
        expect((await review.channel.last(3)).entries.map((entry) => entry.text)).toEqual(["two", "three", "four"]);
        expect((await refusal(review.channel.read({ after: "yesterday" }))).message).toBe(
          "cursor 'yesterday' is not a channel entry id: pass an id from a previous read, such as '1732612345678-0'",
        );
        // Past a stream id's 64-bit numbers: refused by name, not by Redis; after the largest id nothing follows.
        const past = "18446744073709551616-0";
        expect(await refusal(review.channel.read({ after: past }))).toMatchObject({
          code: "bad_cursor",
          message: `cursor '${past}' is not a channel entry id: pass an id from a previous read, such as '1732612345678-0'`,
        });
        const largest = "18446744073709551615-18446744073709551615";
        expect(await review.channel.read({ after: largest })).toEqual({ entries: [], cursor: largest });
        expect((await refusal(review.channel.markSeen("bob", past))).code).toBe("bad_cursor");
        expect((await refusal(review.channel.last(0))).message).toBe(
          "count must be a whole number from 1 to 1000 (got 0)",
        );
      });

      it("keeps a last-seen cursor per member that only moves forward", async () => {
        const a = await review.channel.post({ from: "alice", text: "a" });
        const b = await review.channel.post({ from: "alice", text: "b" });
        expect((await review.channel.unseen("bob")).entries.map((entry) => entry.text)).toEqual(["a", "b"]);
        expect(await review.channel.markSeen("bob", b.id)).toBe(b.id);
        expect(await review.channel.markSeen("bob", a.id)).toBe(b.id);
        await review.channel.post({ from: "alice", text: "c" });
        expect((await review.channel.unseen("bob")).entries.map((entry) => entry.text)).toEqual(["c"]);
        expect((await review.channel.unseen("helper")).entries).toHaveLength(3);
      });

      it("lists and acknowledges a member's unread mentions, by id or up to an id, apart from similar names", async () => {
        await review.start(MEMBERS);
        const shortName = store.instance("team", "main");
        await shortName.start([
          { name: "al", agent: "al", kind: "ref" },
          { name: "al-x", agent: "al-x", kind: "ref" },
          { name: "alice", agent: "alice", kind: "ref" },
        ]);
        const posts = [];
        for (const text of ["@al one", "@alice @al two", "@al-x three", "@al four"]) {
          posts.push(await shortName.channel.post({ from: "http:boss", text }));
        }
        const inbox = await shortName.channel.inbox("al");
        expect(inbox.unread).toBe(3);
        expect(inbox.entries.map((entry) => entry.text)).toEqual(["@al one", "@alice @al two", "@al four"]);
        expect((await shortName.channel.inbox("al", 1)).entries.map((entry) => entry.text)).toEqual(["@al one"]);
        expect(await shortName.channel.ack("al", [posts[0]?.id ?? ""])).toBe(1);
        expect(await shortName.channel.ack("al", [posts[0]?.id ?? ""])).toBe(0);
        expect(await shortName.channel.ackUpTo("al", posts[3]?.id ?? "")).toBe(2);
        expect((await shortName.channel.inbox("al")).unread).toBe(0);
        expect((await shortName.channel.inbox("alice")).unread).toBe(1);
        expect((await shortName.channel.inbox("al-x")).unread).toBe(1);
      });
    });

    describe("delivery and a member's view", () => {
      it("posts as the member an agent plays, naming each notified member's agent, in one step", async () => {
        const asHelper = await review.channel.deliver({
          agent: "review__main__helper",
          text: "@alice @bob look, @carol",
        });
        expect(asHelper).toEqual({
          post: { id: asHelper.post.id, mentions: ["alice", "bob"], unreached: ["carol"] },
          from: "helper",
          notify: [
            { member: "alice", agent: "alice" },
            { member: "bob", agent: "bob" },
          ],
        });
        const fromHttp = await review.channel.deliver({ from: "http:carol", text: "@helper @Helper ping" });
        expect(fromHttp.notify).toEqual([{ member: "helper", agent: "review__main__helper" }]);
        expect((await review.channel.read()).entries.map((entry) => [entry.from, entry.mentions])).toEqual([
          ["helper", ["alice", "bob"]],
          ["http:carol", ["helper"]],
        ]);
        expect((await review.channel.inbox("alice")).entries.map((entry) => entry.id)).toEqual([asHelper.post.id]);
      });

      it("refuses a post for an agent that plays no member, or in a stopped instance, storing nothing", async () => {
        const error = await refusal(review.channel.deliver({ agent: "mallory", text: "@bob hi" }));
        expect(error.code).toBe("not_a_member");
        expect(error.message).toBe('mallory is not a participant in workflow "review".');
        expect(error.hint).toBe("Add mallory to .workflows/review.yaml first.");
        await review.stop();
        expect((await refusal(review.channel.deliver({ agent: "alice", text: "@bob hi" }))).code).toBe(
          "workflow_not_running",
        );
        expect(await review.channel.length()).toBe(0);
        expect((await review.channel.inbox("bob")).unread).toBe(0);
      });

      it("reads what a member sees at once: members, newest posts, cursor, unread mentions, documents", async () => {
        const first = await review.channel.post({ from: "alice", text: "@helper one" });
        await review.channel.post({ from: "bob", text: "two" });
        clock.advance(1);
        const third = await review.channel.post({ from: "http:carol", text: "@helper three" });
        await review.channel.markSeen("helper", first.id);
        await review.documents.write("plan.md", "x", { by: "alice" });
        const view = await review.memberView("review__main__helper", { channel: 2, mentions: 1 });
        expect(view).toEqual({
          member: { name: "helper", agent: "review__main__helper", kind: "inline" },
          members: await review.members(),
          newest: (await review.channel.last(2)).entries,
          seen: first.id,
          mentions: [(await review.channel.read()).entries[0]],
          unread: 2,
          documents: await review.documents.list(),
        });
        expect(await review.channel.read({ after: first.id })).toMatchObject({ cursor: third.id });
        expect(await review.memberView("bob", { channel: 5, mentions: 5 })).toMatchObject({
          member: { name: "bob" },
          seen: undefined,
          mentions: [],
          unread: 0,
        });
      });

      it("says why an agent may not work here: not a participant, or the instance is not running", async () => {
        expect(await review.memberView("mallory", { channel: 5, mentions: 5 })).toEqual({
          refused: "not_a_participant",
        });
        await review.stop();
        expect(await review.memberView("alice", { channel: 5, mentions: 5 })).toEqual({
          refused: "workflow_not_running",
        });
        expect(await store.instance("review", "never").memberView("alice", { channel: 5, mentions: 5 })).toEqual({
          refused: "workflow_not_running",
        });
      });
    });

    describe("documents", () => {
      it("writes, appends, reads and lists documents with versions", async () => {
        expect(await review.documents.write("plan.md", "step 1", { by: "alice" })).toEqual({ version: 1, bytes: 6 });
        clock.advance(10);
        expect(await review.documents.write("plan.md", "\nstep 2", { by: "http:carol", mode: "append" })).toEqual({
          version: 2,
          bytes: 13,
        });
        expect(await review.documents.read("plan.md")).toEqual({
          name: "plan.md",
          text: "step 1\nstep 2",
          version: 2,
          bytes: 13,
          updatedBy: "http:carol",
          updatedAt: 1_732_600_000_010,
        });
        await review.documents.write("notes", "é", { by: "bob" });
        expect((await review.documents.list()).map((doc) => [doc.name, doc.bytes])).toEqual([
          ["notes", 2],
          ["plan.md", 13],
        ]);
      });

      it("refuses a stale version, a new document at ifVersion 0 that exists, and names the fix", async () => {
        await review.documents.write("plan.md", "a", { by: "alice" });
        const error = await refusal(review.documents.write("plan.md", "b", { by: "bob", ifVersion: 0 }));
        expect(error.message).toBe(
          "document 'plan.md' is at version 1, not the one expected: read it again, then write",
        );
        expect(await review.documents.write("plan.md", "b", { by: "bob", ifVersion: 1 })).toMatchObject({ version: 2 });
      });

      it("holds to the size and count limits, also when appending", async () => {
        expect((await refusal(review.documents.write("big", "x".repeat(65), { by: "alice" }))).message).toBe(
          "document 'big' would be 65 bytes, more than the 64 one document may hold: split it into several documents",
        );
        await review.documents.write("a", "x".repeat(60), { by: "alice" });
        expect(
          (await refusal(review.documents.write("a", "x".repeat(5), { by: "alice", mode: "append" }))).message,
        ).toBe("document 'a' would be larger than the 64 bytes one document may hold: split it into several documents");
        await review.documents.write("b", "x", { by: "alice" });
        expect((await refusal(review.documents.write("c", "x", { by: "alice" }))).message).toBe(
          "review:main already has 2 documents, the most it may hold: write to an existing one",
        );
        expect(await review.documents.write("b", "y", { by: "alice" })).toMatchObject({ version: 2 });
      });

      it("names an unknown document and a bad name", async () => {
        await review.documents.write("plan.md", "a", { by: "alice" });
        expect((await refusal(review.documents.read("plam.md"))).message).toBe(
          "review:main has no document 'plam.md' (documents: plan.md)",
        );
        expect((await refusal(review.documents.write("../etc", "a", { by: "alice" }))).code).toBe("bad_document_name");
      });
    });

    describe("proposals", () => {
      it("decides at once when more than half the voters agree, then takes no more votes", async () => {
        const proposal = await review.proposals.create({ title: "Ship it?", by: "alice" });
        expect(proposal).toEqual({
          id: "p1",
          title: "Ship it?",
          options: ["yes", "no"],
          createdBy: "alice",
          createdAt: 1_732_600_000_000,
          voters: ["alice", "bob", "helper"],
        });
        const first = await review.proposals.vote({ id: "p1", voter: "alice", option: "yes" });
        expect(first).toMatchObject({
          status: { status: "open" },
          tally: { yes: 1, no: 0 },
          cast: 1,
          closedNow: false,
        });
        const second = await review.proposals.vote({ id: "p1", voter: "bob", option: "yes" });
        expect(second).toMatchObject({
          status: { status: "decided", result: "yes" },
          tally: { yes: 2, no: 0 },
          closedNow: true,
        });
        expect((await refusal(review.proposals.vote({ id: "p1", voter: "helper", option: "no" }))).message).toBe(
          "proposal 'p1' is closed: see its result with team_proposal_status",
        );
        expect(await review.proposals.get("p1")).toMatchObject({ votes: { alice: "yes", bob: "yes" }, cast: 2 });
      });

      it("decides by the most votes once everyone voted, or ties; a voter may change a vote while open", async () => {
        const plurality = await review.proposals.create({ title: "Which?", options: ["a", "b", "c"], by: "http:boss" });
        await review.proposals.vote({ id: plurality.id, voter: "alice", option: "a" });
        await review.proposals.vote({ id: plurality.id, voter: "alice", option: "b" });
        await review.proposals.vote({ id: plurality.id, voter: "bob", option: "c" });
        const last = await review.proposals.vote({ id: plurality.id, voter: "helper", option: "b" });
        expect(last).toMatchObject({ status: { status: "decided", result: "b" }, tally: { a: 0, b: 2, c: 1 } });
        const tie = await review.proposals.create({ title: "Tie?", options: ["a", "b", "c"], by: "alice" });
        await review.proposals.vote({ id: tie.id, voter: "alice", option: "a" });
        await review.proposals.vote({ id: tie.id, voter: "bob", option: "b" });
        const tied = await review.proposals.vote({ id: tie.id, voter: "helper", option: "c" });
        expect(tied).toMatchObject({ status: { status: "tied" }, closedNow: true });
        expect((await review.proposals.list()).map((entry) => [entry.proposal.id, entry.status.status])).toEqual([
          ["p1", "decided"],
          ["p2", "tied"],
        ]);
      });

      it("needs more than half: two of four voters leave it open, and a 2-2 split once all voted is a tie", async () => {
        const four = store.instance("four", "main");
        await four.start(["a", "b", "c", "d"].map((name) => ({ name, agent: name, kind: "ref" as const })));
        const { id } = await four.proposals.create({ title: "Go?", by: "a" });
        await four.proposals.vote({ id, voter: "a", option: "yes" });
        expect(await four.proposals.vote({ id, voter: "b", option: "yes" })).toMatchObject({
          status: { status: "open" },
          tally: { yes: 2, no: 0 },
          closedNow: false,
        });
        await four.proposals.vote({ id, voter: "c", option: "no" });
        expect(await four.proposals.vote({ id, voter: "d", option: "no" })).toMatchObject({
          status: { status: "tied" },
          cast: 4,
          closedNow: true,
        });
      });

      it("names an unknown proposal, a voter who is not one, an unknown option and bad proposals", async () => {
        await review.proposals.create({ title: "Ship?", by: "alice" });
        expect((await refusal(review.proposals.vote({ id: "p9", voter: "alice", option: "yes" }))).message).toBe(
          "review:main has no proposal 'p9'",
        );
        expect((await refusal(review.proposals.vote({ id: "p1", voter: "carol", option: "yes" }))).message).toBe(
          "carol may not vote on proposal 'p1': its voters are the members when it was created",
        );
        expect((await refusal(review.proposals.vote({ id: "p1", voter: "bob", option: "maybe" }))).message).toBe(
          "'maybe' is not an option of proposal 'p1': vote for one of its options",
        );
        expect((await refusal(review.proposals.create({ title: "", by: "alice" }))).code).toBe("bad_proposal");
        expect((await refusal(review.proposals.create({ title: "x", options: ["a"], by: "alice" }))).message).toBe(
          "a proposal has 2-10 options (got 1)",
        );
        expect((await refusal(review.proposals.create({ title: "x", options: ["a", "a"], by: "alice" }))).code).toBe(
          "bad_proposal",
        );
      });
    });
  });
}
