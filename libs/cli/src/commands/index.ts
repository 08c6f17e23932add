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
import { register as ps } from "./workflow-ps.js";
import { register as run } from "./workflow-run.js";
import { register as start } from "./workflow-start.js";
import { register as stop } from "./workflow-stop.js";

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
  run,
  start,
  stop,
  ps,
  agent,
  pairing,
  completion,
];
