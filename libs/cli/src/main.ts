#!/usr/bin/env node
import { reportError } from "./cli-errors.js";
import { buildProgram } from "./program.js";

let command = "";

/** Prints what went wrong in one line (plus a hint), never a stack unless MONIRO_DEBUG=1; sets the exit code. */
function fail(error: unknown): void {
  const report = reportError(error, command);
  for (const line of report.lines) process.stderr.write(`${line}\n`);
  process.exitCode = report.exitCode;
}

// `moniro events | head`: the reader went away; that is the end, not an error.
process.stdout.on("error", (error: NodeJS.ErrnoException) => {
  if (error.code === "EPIPE") process.exit(0);
  fail(error);
  process.exit();
});
process.on("uncaughtException", (error) => {
  fail(error);
  process.exit();
});
process.on("unhandledRejection", (error) => {
  fail(error);
  process.exit();
});

try {
  await buildProgram((path) => {
    command = path;
  }).parseAsync(process.argv);
} catch (error) {
  fail(error);
}
