import type { PersonalContext } from "@moniro/ports";
import type { FakeClock } from "@moniro/ports/test";
import { afterEach, beforeEach, describe, expect, it } from "vitest";

export interface PersonalContextHarness {
  context: PersonalContext;
  clock: FakeClock;
  cleanup?(): Promise<void>;
}

/** The PersonalContext port's behaviour, for the in-memory fake and the Redis adapter alike. */
export function describePersonalContextContract(
  name: string,
  factory: () => Promise<PersonalContextHarness> | PersonalContextHarness,
): void {
  describe(`PersonalContext contract: ${name}`, () => {
    let h: PersonalContextHarness;
    beforeEach(async () => {
      h = await factory();
      h.clock.set(Date.UTC(2026, 10, 26, 9));
    });
    afterEach(async () => {
      await h.cleanup?.();
    });

    it("memory: set says whether it was new, get, list sorted by key, delete says whether it existed", async () => {
      expect(await h.context.setMemory("ada", "tea", "green")).toEqual({ created: true });
      expect(await h.context.setMemory("ada", "tea", "oolong")).toEqual({ created: false });
      await h.context.setMemory("ada", "auth", "JWT");
      expect(await h.context.getMemory("ada", "tea")).toBe("oolong");
      expect(await h.context.getMemory("ada", "nope")).toBeUndefined();
      expect(await h.context.listMemory("ada")).toEqual([
        { key: "auth", value: "JWT" },
        { key: "tea", value: "oolong" },
      ]);
      expect(await h.context.listMemory("bob")).toEqual([]);
      expect(await h.context.deleteMemory("ada", "tea")).toBe(true);
      expect(await h.context.deleteMemory("ada", "tea")).toBe(false);
    });

    it("todos: short numeric ids in order, done ones hidden unless asked, done twice says already", async () => {
      const first = await h.context.addTodo("ada", "review PR");
      h.clock.advance(1000);
      const second = await h.context.addTodo("ada", "ship v1");
      expect([first.id, second.id]).toEqual(["1", "2"]);
      expect(first).toMatchObject({ text: "review PR", done: false, createdAt: "2026-11-26T09:00:00.000Z" });
      const done = await h.context.completeTodo("ada", "1");
      expect(done).toMatchObject({ already: false, todo: { id: "1", done: true } });
      expect((await h.context.completeTodo("ada", "1"))?.already).toBe(true);
      expect(await h.context.completeTodo("ada", "99")).toBeUndefined();
      expect((await h.context.listTodos("ada")).map((todo) => todo.id)).toEqual(["2"]);
      expect((await h.context.listTodos("ada", { includeDone: true })).map((todo) => todo.id)).toEqual(["1", "2"]);
    });

    it("notes: newest N oldest first, a query keeps notes with every word, the context is kept", async () => {
      for (const text of ["Learned auth uses JWT", "Lunch", "Auth refresh tokens rotate"]) {
        await h.context.addNote("ada", text, "personal");
        h.clock.advance(5);
      }
      expect((await h.context.readNotes("ada", { last: 2 })).map((note) => note.text)).toEqual([
        "Lunch",
        "Auth refresh tokens rotate",
      ]);
      const matched = await h.context.readNotes("ada", { last: 10, query: "AUTH" });
      expect(matched.map((note) => note.text)).toEqual(["Learned auth uses JWT", "Auth refresh tokens rotate"]);
      expect(matched[0]?.context).toBe("personal");
      expect(await h.context.readNotes("ada", { last: 10, query: "auth lunch" })).toEqual([]);
    });

    it("promptSnapshot: every memory, open todos, the newest notes", async () => {
      await h.context.setMemory("ada", "b", "2");
      await h.context.setMemory("ada", "a", "1");
      await h.context.addTodo("ada", "open one");
      const closed = await h.context.addTodo("ada", "closed one");
      await h.context.completeTodo("ada", closed.id);
      for (const text of ["n1", "n2", "n3"]) await h.context.addNote("ada", text, "personal");
      const snapshot = await h.context.promptSnapshot("ada", { notes: 2 });
      expect(snapshot.memory.map((entry) => entry.key)).toEqual(["a", "b"]);
      expect(snapshot.todos.map((todo) => todo.text)).toEqual(["open one"]);
      expect(snapshot.notes.map((note) => note.text)).toEqual(["n2", "n3"]);
      expect((await h.context.promptSnapshot("ada", { notes: 0 })).notes).toEqual([]);
      expect(await h.context.promptSnapshot("nobody", { notes: 5 })).toEqual({ memory: [], todos: [], notes: [] });
    });
  });
}
