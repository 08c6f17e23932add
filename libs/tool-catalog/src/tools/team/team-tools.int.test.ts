import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type InboundEnvelope, notAParticipant, refusalText, workflowNotRunning } from "@moniro/envelopes";
import { type NamedMember, RedisAgentStateStore, RedisWorkspaceStore } from "@moniro/store";
import { type TestRedis, testRedis } from "@moniro/store/test";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { runTool } from "../../run-tool.js";
import { testToolContext } from "../../test/test-context.js";
import type { TeamPort } from "../../tool.js";

const MEMBERS: NamedMember[] = [
  { name: "alice", agent: "alice", kind: "ref", role: "reviewer" },
  { name: "bob", agent: "bob", kind: "ref", role: "author" },
  { name: "helper", agent: "review__main__helper", kind: "inline" },
];

// Team tools over a real Redis (random prefix): what a member sees, what the tools push, and every refusal.
describe("team tools over Redis", () => {
  let t: TestRedis;
  let store: RedisWorkspaceStore;
  let states: RedisAgentStateStore;
  let root: string;
  let published: InboundEnvelope[];
  let team: TeamPort;
  const as = (agent: string, context = "review:main") =>
    testToolContext({ agent, context, team, workspace: join(root, agent) });

  beforeEach(async () => {
    t = testRedis();
    store = new RedisWorkspaceStore(t.redis, { prefix: t.prefix });
    states = new RedisAgentStateStore(t.redis, { prefix: t.prefix });
    root = mkdtempSync(join(tmpdir(), "moniro-team-"));
    published = [];
    team = {
      store,
      async publishInbound(envelope) {
        published.push(envelope);
      },
      agentState: async (agent) => (await states.get(agent))?.state,
      directoryOf: (workflow, tag) => join(root, `${workflow}__${tag}`),
    };
    await store.instance("review", "main").start(MEMBERS);
  });
  afterEach(async () => {
    await t.cleanup();
    rmSync(root, { recursive: true, force: true });
  });

  describe("channel_send", () => {
    it("posts, pushes each mentioned member an immediate input and says who was not reached", async () => {
      const outcome = await runTool("channel_send", { text: "@bob check line 42, @carol too" }, as("alice"));
      expect(outcome.isError).toBeUndefined();
      expect(outcome.data).toMatchObject({
        notified: ["bob"],
        unreached: [{ name: "carol", reason: "not a member of review:main" }],
      });
      const { postId } = outcome.data as { postId: string };
      expect(outcome.content).toBe(
        `Posted to review:main (id ${postId}). Notified: bob. Not reached: carol (not members of review:main; see team_members). The post is kept.`,
      );
      expect(published).toHaveLength(1);
      expect(published[0]).toMatchObject({
        agent: "bob",
        source: "ws:review:main",
        replyTo: "ws:review:main",
        context: "review:main",
        priority: "immediate",
        text: "alice: @bob check line 42, @carol too",
      });
      const { entries } = await store.instance("review", "main").channel.read();
      expect(entries.map((entry) => [entry.from, entry.text])).toEqual([["alice", "@bob check line 42, @carol too"]]);
    });

    it("a post without a mention is kept and wakes nobody", async () => {
      const outcome = await runTool("channel_send", { text: "lunch at noon" }, as("alice"));
      expect(outcome.content).toContain("Nobody was notified.");
      expect(published).toEqual([]);
      expect(await store.instance("review", "main").channel.length()).toBe(1);
    });

    it("an inline member posts under its member name, a sub-agent as its parent's member", async () => {
      await runTool("channel_send", { text: "@alice done" }, as("review__main__helper"));
      expect(published[0]).toMatchObject({ agent: "alice", text: "helper: @alice done" });
      await runTool("channel_send", { text: "@helper over to you" }, as("alice--c1"));
      expect(published[1]).toMatchObject({ agent: "review__main__helper", text: "alice: @helper over to you" });
    });

    it("attack: a mention wakes only a member of this instance, by its member name (not an agent name, a look-alike, an address or another instance's member)", async () => {
      await store.instance("review", "other").start([{ name: "carol", agent: "carol", kind: "ref" }]);
      const text =
        "@review__main__helper @carol @b\u043eb @mallory--c1 bob@bob @bob/x @he*per @>" + " @review:main @alice";
      const outcome = await runTool("channel_send", { text }, as("alice"));
      expect(outcome.data).toMatchObject({ notified: [] });
      expect((outcome.data as { unreached: { name: string }[] }).unreached.map((u) => u.name)).toEqual([
        "review__main__helper",
        "carol",
        "b",
        "mallory--c1",
        "he",
        "review",
      ]);
      expect(published).toEqual([]);
      expect(await store.instance("review", "other").channel.length()).toBe(0);
      expect((await store.instance("review", "main").channel.inbox("bob")).unread).toBe(0);
    });

    it("refuses an empty and an oversized post, naming the fix", async () => {
      const empty = await runTool("channel_send", { text: "" }, as("alice"));
      expect(empty).toMatchObject({ isError: true, errorCode: "invalid-input" });
      const blank = await runTool("channel_send", { text: "   " }, as("alice"));
      expect(blank).toMatchObject({ isError: true, errorCode: "empty_post" });
      const huge = await runTool("channel_send", { text: "x".repeat(100_001) }, as("alice"));
      expect(huge).toMatchObject({ isError: true, errorCode: "post_too_large" });
      expect(huge.content).toBe(
        "a channel post is at most 32,000 characters (this one has 100,001): put long text in a document (team_doc_write) and post its name",
      );
      expect(published).toEqual([]);
    });
  });

  describe("channel_read", () => {
    it("reads the last N and on from a cursor, marking what was read as seen", async () => {
      for (const text of ["one", "two", "three"]) await runTool("channel_send", { text }, as("alice"));
      const last = await runTool("channel_read", { last: 2 }, as("bob"));
      expect(last.content).toMatch(/^\[\d+-\d+\] alice: two\n\[\d+-\d+\] alice: three$/);
      const first = await runTool("channel_read", {}, as("bob"));
      const { entries } = first.data as { entries: { id: string; text: string }[] };
      expect(entries.map((entry) => entry.text)).toEqual(["one", "two", "three"]);
      const after = await runTool("channel_read", { after: entries[0]?.id }, as("bob"));
      expect((after.data as { entries: { text: string }[] }).entries.map((entry) => entry.text)).toEqual([
        "two",
        "three",
      ]);
      expect(await store.instance("review", "main").channel.seen("bob")).toBe(entries[2]?.id);
    });

    it("refuses a bad cursor and both options at once", async () => {
      const bad = await runTool("channel_read", { after: "yesterday" }, as("bob"));
      expect(bad).toMatchObject({ isError: true, errorCode: "invalid-input" });
      expect(bad.content).toContain("must be a channel entry id");
      const both = await runTool("channel_read", { after: "1-0", last: 3 }, as("bob"));
      expect(both).toMatchObject({ isError: true, errorCode: "invalid-input" });
      expect(both.content).toContain("not both");
    });

    it("refuses a cursor past a stream id's 64-bit numbers by name, not with Redis's error, in channel_read and inbox_ack", async () => {
      await runTool("channel_send", { text: "@bob hi" }, as("alice"));
      const rule = `must be a channel entry id such as '1732612345678-0' (from a previous read): each of its two numbers is at most 18446744073709551615`;
      for (const [tool, input, field] of [
        ["channel_read", { after: "99999999999999999999-0" }, "after"],
        ["inbox_ack", { upTo: "1-99999999999999999999" }, "upTo"],
        ["inbox_ack", { ids: ["18446744073709551616-0"] }, "ids.0"],
      ] as const) {
        const outcome = await runTool(tool, input, as("bob"));
        expect(outcome, tool).toMatchObject({ isError: true, errorCode: "invalid-input" });
        expect(outcome.content, tool).toBe(
          `Invalid input for '${tool}': '${field}': ${rule}. Fix these fields and call again.`,
        );
      }
      const largest = await runTool("channel_read", { after: "18446744073709551615-18446744073709551615" }, as("bob"));
      expect(largest).toMatchObject({ content: "No posts." });
      expect((await runTool("inbox", {}, as("bob"))).data).toMatchObject({ unread: 1 });
    });
  });

  describe("inbox and inbox_ack", () => {
    it("lists my unread mentions and acknowledges them", async () => {
      await runTool("channel_send", { text: "@bob first" }, as("alice"));
      await runTool("channel_send", { text: "@bob second" }, as("alice"));
      const inbox = await runTool("inbox", {}, as("bob"));
      const { entries, unread } = inbox.data as { entries: { id: string; text: string }[]; unread: number };
      expect(unread).toBe(2);
      expect(entries.map((entry) => entry.text)).toEqual(["@bob first", "@bob second"]);
      expect((await runTool("inbox", {}, as("alice"))).content).toBe("No unread mentions.");
      const acked = await runTool("inbox_ack", { ids: [entries[0]?.id] }, as("bob"));
      expect(acked.data).toEqual({ acked: 1 });
      await runTool("inbox_ack", { upTo: entries[1]?.id }, as("bob"));
      expect((await runTool("inbox", {}, as("bob"))).content).toBe("No unread mentions.");
    });

    it("inbox_ack needs exactly one of ids and upTo", async () => {
      const none = await runTool("inbox_ack", {}, as("bob"));
      expect(none).toMatchObject({ isError: true, errorCode: "invalid-input" });
      expect(none.content).toContain("exactly one");
      const badId = await runTool("inbox_ack", { ids: ["p1"] }, as("bob"));
      expect(badId).toMatchObject({ isError: true, errorCode: "invalid-input" });
    });
  });

  describe("team_members", () => {
    it("lists name, role and state from the agent state records", async () => {
      await states.update("bob", { state: "running" });
      const outcome = await runTool("team_members", {}, as("alice"));
      expect(outcome.content).toBe("@alice (you): reviewer; idle\n@bob: author; running\n@helper: no role; idle");
      expect((outcome.data as { members: unknown[] }).members[1]).toMatchObject({
        name: "bob",
        agent: "bob",
        role: "author",
        state: "running",
      });
    });

    it("refuses input it does not take", async () => {
      // An empty object schema strips unknown keys; a non-object is refused.
      const outcome = await runTool("team_members", "everyone", as("alice"));
      expect(outcome).toMatchObject({ isError: true, errorCode: "invalid-input" });
    });
  });

  describe("team documents", () => {
    it("writes, appends, lists and reads a document", async () => {
      const written = await runTool("team_doc_write", { name: "plan.md", text: "step 1\n" }, as("alice"));
      expect(written.content).toBe("plan.md is now v1 (7 bytes).");
      await runTool("team_doc_write", { name: "plan.md", text: "step 2\n", mode: "append", ifVersion: 1 }, as("bob"));
      const list = await runTool("team_doc_list", {}, as("alice"));
      expect(list.content).toMatch(/^plan\.md \(v2, 14 bytes, by bob at /);
      const read = await runTool("team_doc_read", { name: "plan.md" }, as("alice"));
      expect(read.content).toBe("plan.md v2 (by bob):\nstep 1\nstep 2\n");
    });

    it("refuses a stale write, an unknown document and a bad name", async () => {
      await runTool("team_doc_write", { name: "plan.md", text: "a" }, as("alice"));
      const stale = await runTool("team_doc_write", { name: "plan.md", text: "b", ifVersion: 0 }, as("bob"));
      expect(stale).toMatchObject({ isError: true, errorCode: "version_conflict" });
      expect(stale.content).toContain("read it again");
      const unknown = await runTool("team_doc_read", { name: "nope.md" }, as("bob"));
      expect(unknown).toMatchObject({ isError: true, errorCode: "unknown_document" });
      const badName = await runTool("team_doc_read", { name: "../etc/passwd" }, as("bob"));
      expect(badName).toMatchObject({ isError: true, errorCode: "invalid-input" });
    });
  });

  describe("team proposals", () => {
    it("creates (announced in the channel), votes (the proposer hears of each vote) and reports the status", async () => {
      const created = await runTool("team_proposal_create", { title: "Merge PR 7?" }, as("alice"));
      expect(created.content).toBe("Proposal p1 created and announced; voters: alice, bob, helper.");
      const { entries } = await store.instance("review", "main").channel.read();
      expect(entries[0]?.text).toBe("Proposal p1: Merge PR 7? (options: yes, no). Vote with team_proposal_vote.");
      const vote = await runTool("team_proposal_vote", { id: "p1", option: "yes" }, as("bob"));
      expect(vote.content).toBe("Voted 'yes' on p1: open (1 of 3 voted); yes: 1, no: 0.");
      const closing = await runTool("team_proposal_vote", { id: "p1", option: "yes" }, as("review__main__helper"));
      expect(closing.content).toBe("Voted 'yes' on p1: decided 'yes'; yes: 2, no: 0.");
      expect(published.map((input) => [input.agent, input.priority, input.source, input.context])).toEqual([
        ["alice", "normal", "ws:review:main", "review:main"],
        ["alice", "normal", "ws:review:main", "review:main"],
      ]);
      expect(published.map((input) => input.text)).toEqual([
        `bob voted 'yes' on p1 "Merge PR 7?" (1 of 3 voted).`,
        `helper voted 'yes' on p1 "Merge PR 7?" (2 of 3 voted). Voting is over: decided 'yes' (yes: 2, no: 0).`,
      ]);
      expect(published.map((input) => input.meta?.batch)).toEqual(["votes:review:main", "votes:review:main"]);
      const status = await runTool("team_proposal_status", { id: "p1" }, as("alice"));
      expect(status.content).toBe(`p1 "Merge PR 7?": decided 'yes'; yes: 2, no: 0; votes: bob: yes, helper: yes.`);
    });

    it("refuses an unknown option, an unknown or malformed id, a closed proposal and too few options", async () => {
      await runTool("team_proposal_create", { title: "Lunch?", options: ["pizza", "sushi"] }, as("alice"));
      const option = await runTool("team_proposal_vote", { id: "p1", option: "tacos" }, as("bob"));
      expect(option).toMatchObject({ isError: true, errorCode: "unknown_option" });
      const unknown = await runTool("team_proposal_status", { id: "p9" }, as("bob"));
      expect(unknown).toMatchObject({ isError: true, errorCode: "unknown_proposal" });
      const malformed = await runTool("team_proposal_vote", { id: "lunch", option: "pizza" }, as("bob"));
      expect(malformed).toMatchObject({ isError: true, errorCode: "invalid-input" });
      const few = await runTool("team_proposal_create", { title: "x", options: ["only"] }, as("bob"));
      expect(few).toMatchObject({ isError: true, errorCode: "invalid-input" });
      await runTool("team_proposal_vote", { id: "p1", option: "pizza" }, as("bob"));
      await runTool("team_proposal_vote", { id: "p1", option: "pizza" }, as("alice"));
      const closed = await runTool("team_proposal_vote", { id: "p1", option: "sushi" }, as("review__main__helper"));
      expect(closed).toMatchObject({ isError: true, errorCode: "proposal_closed" });
      // Only bob's accepted vote reaches the proposer: refused votes send nothing, nor does alice's vote on her own proposal.
      expect(published.map((input) => [input.agent, input.text])).toEqual([
        ["alice", `bob voted 'pizza' on p1 "Lunch?" (1 of 3 voted).`],
      ]);
    });
  });

  describe("membership", () => {
    it("refuses a team tool from the personal context", async () => {
      const outcome = await runTool("channel_send", { text: "hi" }, as("alice", "personal"));
      expect(outcome).toMatchObject({ isError: true, errorCode: "not-in-workspace" });
      expect(outcome.content).toContain("works only in a workspace");
    });

    it("refuses a call naming an instance that is not running, with the seed's text", async () => {
      const outcome = await runTool("inbox", {}, as("alice", "review:pr-9"));
      expect(outcome).toMatchObject({ isError: true, errorCode: "workflow_not_running" });
      expect(outcome.content).toBe(refusalText(workflowNotRunning("review", "pr-9")));
      await store.instance("review", "main").stop();
      const stopped = await runTool("channel_send", { text: "@bob hi" }, as("alice"));
      expect(stopped.content).toBe(refusalText(workflowNotRunning("review", "main")));
      expect(published).toEqual([]);
    });

    it("refuses a non-member, with the seed's text", async () => {
      const outcome = await runTool("channel_send", { text: "@bob hi" }, as("mallory"));
      expect(outcome).toMatchObject({ isError: true, errorCode: "not_a_member" });
      expect(outcome.content).toBe(refusalText(notAParticipant("mallory", "review")));
      expect(published).toEqual([]);
      expect(await store.instance("review", "main").channel.length()).toBe(0);
    });

    it("without a workspace store a workspace-context call is refused", async () => {
      const ctx = testToolContext({ agent: "alice", context: "review:main" });
      const outcome = await runTool("read", { path: "a.txt" }, ctx);
      expect(outcome).toMatchObject({ isError: true, errorCode: "workspace-unavailable" });
    });
  });

  describe("shared directories", () => {
    it("file tools of a member in a workspace context work in the instance's directory", async () => {
      const written = await runTool("write", { path: "notes.txt", content: "shared" }, as("alice"));
      expect(written.isError).toBeUndefined();
      expect(readFileSync(join(root, "review__main", "notes.txt"), "utf8")).toBe("shared");
      const read = await runTool("read", { path: "notes.txt" }, as("bob"));
      expect(read.content).toContain("shared");
      const personal = await runTool("read", { path: "notes.txt" }, as("bob", "personal"));
      expect(personal).toMatchObject({ isError: true, errorCode: "not-found" });
    });

    it("a non-member naming the workspace context reaches nothing", async () => {
      mkdirSync(join(root, "review__main"), { recursive: true });
      writeFileSync(join(root, "review__main", "secret.txt"), "team only");
      const outcome = await runTool("read", { path: "secret.txt" }, as("mallory"));
      expect(outcome).toMatchObject({ isError: true, errorCode: "not_a_member" });
      const exec = await runTool("exec", { command: "cat secret.txt" }, as("mallory"));
      expect(exec).toMatchObject({ isError: true, errorCode: "not_a_member" });
    });

    it("a member cannot reach another instance's directory or another agent's own", async () => {
      await store.instance("review", "other").start([{ name: "carol", agent: "carol", kind: "ref" }]);
      mkdirSync(join(root, "review__other"), { recursive: true });
      writeFileSync(join(root, "review__other", "x.txt"), "other team");
      mkdirSync(join(root, "carol"), { recursive: true });
      writeFileSync(join(root, "carol", "diary.txt"), "carol's");
      for (const path of ["../review__other/x.txt", "../carol/diary.txt", join(root, "carol", "diary.txt")]) {
        const outcome = await runTool("read", { path }, as("alice"));
        expect(outcome, path).toMatchObject({ isError: true, errorCode: "path-outside-workspace" });
      }
      const other = await runTool("read", { path: "x.txt" }, as("alice", "review:other"));
      expect(other).toMatchObject({ isError: true, errorCode: "not_a_member" });
    });
  });
});
