import type { Command } from "commander";
import { register as agent } from "./agent-info.js";
import { register as completion } from "./completion.js";
import { register as control } from "./control.js";
import { register as events } from "./events.js";
import { register as pairing } from "./pairing.js";
import { register as send } from "./send.js";
import { register as stack } from "./stack.js";
import { register as status } from "./status.js";
import { register as thread } from "./thread.js";

/**
 * Every command, in the order `moniro --help` lists them. A command is one
 * file exporting `register(program)`; add it here (libs/cli/README.md).
 */
export const COMMANDS: ReadonlyArray<(program: Command) => void> = [
  stack,
  send,
  events,
  thread,
  status,
  control,
  agent,
  pairing,
  completion,
];
