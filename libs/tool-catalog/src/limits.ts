import { z } from "zod";

/**
 * Limits for exec / process / file tools, from the executor's config. Parse
 * config with `execLimitsSchema.parse({...})`; every field has a default.
 */
export const execLimitsSchema = z.object({
  /** exec timeout when the call gives none. */
  defaultTimeoutMs: z.number().int().positive().default(60_000),
  /** Largest timeout a call may ask for. */
  maxTimeoutMs: z.number().int().positive().default(600_000),
  /** Combined stdout+stderr kept per exec call; the rest is cut with a marker. */
  outputCapBytes: z.number().int().positive().default(30_000),
  /** Between SIGTERM to the process group and SIGKILL. */
  killGraceMs: z.number().int().nonnegative().default(2_000),
  /** prlimit values; absent = not limited. */
  cpuSeconds: z.number().int().positive().optional().default(300),
  addressSpaceBytes: z
    .number()
    .int()
    .positive()
    .optional()
    .default(4 * 1024 ** 3),
  /**
   * Processes a command tree may run at once (`prlimit --nproc`, applied
   * inside the sandbox's own user namespace, so it caps this one call, not
   * every command of the uid): a fork bomb hits it and dies alone.
   */
  maxProcesses: z.number().int().positive().optional().default(256),
  fileSizeBytes: z
    .number()
    .int()
    .positive()
    .optional()
    .default(1024 ** 3),
  /**
   * The size of each of the sandbox's own tmpfs mounts, `/tmp`, `/var/tmp` and `/dev/shm` (memory,
   * gone with the call): a command that fills one gets "No space left on device" instead of taking
   * the executor's memory from every other agent.
   */
  tmpBytes: z
    .number()
    .int()
    .positive()
    .default(512 * 1024 ** 2),
  /**
   * The host uid/gid commands run as. Unset: 65534:65534 (nobody) when the
   * executor runs as root, the executor's own user otherwise (commandUser()).
   */
  runAs: z.object({ uid: z.number().int().positive(), gid: z.number().int().positive() }).optional(),
  /** Background processes not touched for this long are killed and forgotten. */
  processIdleTtlMs: z
    .number()
    .int()
    .positive()
    .default(30 * 60_000),
  /** Lines of combined output kept per background process. */
  processLogLines: z.number().int().positive().default(1_000),
  /** Background processes per executor. */
  maxBackgroundProcesses: z.number().int().positive().default(32),
  /** Background processes of one agent on one executor: no agent takes every slot from the others. */
  maxBackgroundProcessesPerAgent: z.number().int().positive().default(8),
  /** The time one `grep` call's regular expression may run, over all its files (off the event loop; then refused). */
  grepRegexMs: z.number().int().positive().default(10_000),
  /** The most text one `read` returns (its line-numbered lines): a larger file is cut there, with a note how to go on. */
  readMaxBytes: z.number().int().positive().default(100_000),
});
export type ExecLimits = z.output<typeof execLimitsSchema>;
export type ExecLimitsInput = z.input<typeof execLimitsSchema>;

export function execLimits(input: ExecLimitsInput = {}): ExecLimits {
  return execLimitsSchema.parse(input);
}
