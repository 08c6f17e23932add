/** Background process ids embed the owning executor: `<executorId>:<n>`. */
export function processIdOf(executorId: string, sequence: number): string {
  return `${executorId}:${sequence}`;
}

/**
 * The executor that owns a background process, or undefined when the id is
 * malformed. The executor routes calls for foreign ids to
 * `moniro.tool.proc.<ownerOf(id)>`.
 */
export function ownerOf(processId: string): string | undefined {
  const index = processId.lastIndexOf(":");
  if (index <= 0) return undefined;
  const sequence = processId.slice(index + 1);
  if (!/^\d+$/.test(sequence)) return undefined;
  return processId.slice(0, index);
}

/**
 * For the executor's routing: the executor that must run this call, when it
 * is a `process` call about an existing process (poll/log/write/kill);
 * undefined when any executor may run it (other tools, start, list).
 */
export function processCallOwner(tool: string, input: unknown): string | undefined {
  if (tool !== "process" || typeof input !== "object" || input === null) return undefined;
  const { action, processId } = input as { action?: unknown; processId?: unknown };
  if (action === "start" || action === "list" || typeof processId !== "string") return undefined;
  return ownerOf(processId);
}
