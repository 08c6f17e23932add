import type { Terminal } from "./stack.js";

/** Where a command writes for a person: colour when the stream is a TTY (or FORCE_COLOR), never with NO_COLOR. */
export function terminalOf(stream: NodeJS.WriteStream): Terminal & { write(text: string): void } {
  const colour = !process.env.NO_COLOR && (stream.isTTY === true || Boolean(process.env.FORCE_COLOR));
  return { colour, line: (text) => stream.write(`${text}\n`), write: (text) => stream.write(text) };
}
