import type { PromptContextSnapshot } from "@moniro/ports";

/**
 * Tokens of prompt text, estimated at four characters per token (the rule
 * of thumb for English and JSON; no tokenizer on the hot path). Used only
 * to bound the personal sections, never to bill.
 */
export function estimateTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

/** A memory, todo or note line is cut here; the tools give the whole text. */
export const MAX_LINE_CHARS = 400;

/** Memory first, then todos, then notes: each section's share of the budget before leftovers are shared. */
const SHARES = { memory: 0.5, todos: 0.25, notes: 0.25 } as const;
type Section = keyof typeof SHARES;
const ORDER: readonly Section[] = ["memory", "todos", "notes"];

export interface PersonalSections {
  memory: string;
  todos: string;
  notes: string;
}

/** A line flattened to one and cut at MAX_LINE_CHARS (ending in …); `clipped` when cut. */
export function clipLine(line: string): { text: string; clipped: boolean } {
  const flat = line.replace(/\s*\n\s*/g, " ");
  return flat.length <= MAX_LINE_CHARS
    ? { text: flat, clipped: false }
    : { text: `${flat.slice(0, MAX_LINE_CHARS - 1)}…`, clipped: true };
}

/** Whole lines, in order, while they fit `tokens` (each costs its estimate plus one for the newline). */
export function linesWithin(lines: readonly string[], tokens: number): number {
  let used = 0;
  let count = 0;
  for (const line of lines) {
    const cost = estimateTokens(line) + 1;
    if (used + cost > tokens) break;
    used += cost;
    count += 1;
  }
  return count;
}

const cost = (lines: readonly string[]) => lines.reduce((sum, line) => sum + estimateTokens(line) + 1, 0);

/**
 * Splits `maxTokens` over the three sections: each gets up to its share,
 * then what one section leaves unused goes to the others in order (memory,
 * todos, notes).
 */
function allocate(needs: Record<Section, number>, maxTokens: number): Record<Section, number> {
  const given = {} as Record<Section, number>;
  let left = maxTokens;
  for (const section of ORDER) {
    given[section] = Math.min(needs[section], Math.floor(maxTokens * SHARES[section]));
    left -= given[section];
  }
  for (const section of ORDER) {
    const extra = Math.max(0, Math.min(left, needs[section] - given[section]));
    given[section] += extra;
    left -= extra;
  }
  return given;
}

/**
 * Memory, active todos and recent notes as prompt sections within a token
 * budget (DESIGN §5: the prompt stays lean). Whatever does not fit is
 * counted in a closing line that names the tool that reaches it, so the
 * agent knows it is there. Pure: the snapshot was read once for the cycle.
 * `notesAsked`: how many notes were read (as many as came back means there
 * may be older ones).
 */
export function personalSections(
  snapshot: PromptContextSnapshot,
  maxTokens: number,
  notesAsked: number,
): PersonalSections {
  const memory = snapshot.memory.map((entry) => clipLine(`- ${entry.key}: ${entry.value}`));
  const todos = snapshot.todos.map((todo) => clipLine(`- ${todo.id}: ${todo.text}`));
  // The newest notes matter most: fit from the newest back, show oldest first.
  const notesNewestFirst = [...snapshot.notes]
    .reverse()
    .map((note) => clipLine(`- [${note.at.slice(0, 10)}] ${note.text}`));
  const lines = {
    memory: memory.map((line) => line.text),
    todos: todos.map((line) => line.text),
    notes: notesNewestFirst.map((line) => line.text),
  };
  const budget = allocate(
    { memory: cost(lines.memory), todos: cost(lines.todos), notes: cost(lines.notes) },
    maxTokens,
  );

  const memoryShown = linesWithin(lines.memory, budget.memory);
  const memoryLines = lines.memory.slice(0, memoryShown);
  const memoryHidden = lines.memory.length - memoryShown;
  if (memoryHidden > 0) {
    memoryLines.push(`(${memoryHidden} more not shown here: memory_search or memory_get finds them.)`);
  }
  if (memory.slice(0, memoryShown).some((line) => line.clipped)) {
    memoryLines.push("(Lines ending in … are cut: memory_get <key> gives the whole text.)");
  }

  const todosShown = linesWithin(lines.todos, budget.todos);
  const todoLines = lines.todos.slice(0, todosShown);
  const todosHidden = lines.todos.length - todosShown;
  if (todosHidden > 0) todoLines.push(`(${todosHidden} more open: todo_list shows them all.)`);

  const notesShown = linesWithin(lines.notes, budget.notes);
  const noteLines = lines.notes.slice(0, notesShown).reverse();
  if (noteLines.length > 0 && (notesShown < lines.notes.length || snapshot.notes.length >= notesAsked)) {
    noteLines.push("(Older notes: note_read.)");
  } else if (noteLines.length === 0 && lines.notes.length > 0) {
    noteLines.push("(Your notes do not fit here: note_read shows them.)");
  }

  return { memory: memoryLines.join("\n"), todos: todoLines.join("\n"), notes: noteLines.join("\n") };
}
