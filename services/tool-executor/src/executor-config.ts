import { hostname } from "node:os";
import { envFlag, parseEnv, type ServiceConfig, serviceConfigSchema } from "@moniro/config/service";
import { type ExecLimits, execLimits } from "@moniro/tool-catalog";
import { z } from "zod";

const int = (min: number) => z.coerce.number().int().min(min);
/** A variable that no longer exists: setting it stops the executor with `message`. */
const removed = (message: string) => z.undefined({ message }).optional();

const flag = envFlag;

/**
 * The tool-executor's environment: the common service settings plus the
 * executor's identity, its concurrency limit and the exec limits. Every
 * limit has a default; an error names the variable.
 */
export const executorConfigSchema = serviceConfigSchema.extend({
  /** Process ids embed it (`<executorId>:<n>`) and it is a subject token: no dots, colons or spaces. */
  MONIRO_EXECUTOR_ID: z
    .string()
    .regex(/^[A-Za-z0-9_-]{1,100}$/, "must be 1-100 characters of A-Z, a-z, 0-9, '_' or '-' (no dots or colons)")
    .optional(),
  /** Calls run at once; one more waits up to MONIRO_TOOL_BUSY_WAIT_MS for a slot, then is refused with a retryable `executor_busy` result. */
  MONIRO_TOOL_CONCURRENCY: int(1).default(16),
  /** How long a call that finds every slot taken waits for the next one freed before it is refused (0: refuse at once). */
  MONIRO_TOOL_BUSY_WAIT_MS: int(0).default(100),
  /** SIGTERM: how long running calls may take to finish before they are aborted. */
  MONIRO_SHUTDOWN_GRACE_MS: int(0).default(10_000),
  MONIRO_EXEC_TIMEOUT_MS: int(1).optional(),
  MONIRO_EXEC_MAX_TIMEOUT_MS: int(1).optional(),
  MONIRO_EXEC_OUTPUT_CAP_BYTES: int(1).optional(),
  MONIRO_EXEC_CPU_SECONDS: int(1).optional(),
  MONIRO_EXEC_MEMORY_BYTES: int(1).optional(),
  MONIRO_EXEC_MAX_PROCESSES: int(1).optional(),
  MONIRO_EXEC_FILE_SIZE_BYTES: int(1).optional(),
  /** The size of each of the sandbox's tmpfs mounts (/tmp, /var/tmp, /dev/shm). */
  MONIRO_EXEC_TMP_BYTES: int(1).optional(),
  /**
   * The explicit opt-out of the sandbox: exec / process run without
   * bubblewrap, logged at warn at start and reported in every result.
   */
  MONIRO_EXEC_UNSAFE_NO_SANDBOX: flag.default(false),
  /** Removed: the sandbox is always on; these only explain the new names. */
  MONIRO_EXEC_BWRAP: removed(
    "the sandbox is always on now; remove MONIRO_EXEC_BWRAP (the only opt-out is MONIRO_EXEC_UNSAFE_NO_SANDBOX=true)",
  ),
  MONIRO_EXEC_BWRAP_NETWORK: removed(
    "commands have no network unless the agent's tool policy says `network: true`; remove MONIRO_EXEC_BWRAP_NETWORK and set `tools: { network: true }` in the agent's YAML instead",
  ),
  /** `uid:gid` commands run as; default 65534:65534 when the executor is root, its own user otherwise. */
  MONIRO_EXEC_RUN_AS: z
    .string()
    .regex(/^\d+:\d+$/, "must be '<uid>:<gid>' (numbers), e.g. 65534:65534")
    .refine(
      (value) => !value.split(":").includes("0"),
      "must not be root (uid or gid 0): commands run as an unprivileged user, e.g. 65534:65534",
    )
    .optional(),
  /** Background processes untouched this long are killed. */
  MONIRO_PROCESS_IDLE_TTL_MS: int(1).optional(),
  MONIRO_MAX_BACKGROUND_PROCESSES: int(1).optional(),
  MONIRO_MAX_BACKGROUND_PROCESSES_PER_AGENT: int(1).optional(),
});
export type ExecutorConfig = ServiceConfig & z.output<typeof executorConfigSchema>;

export function loadExecutorConfig(env: Record<string, string | undefined> = process.env): ExecutorConfig {
  return parseEnv(executorConfigSchema, env);
}

/** `<hostname>-<pid>-<random>`, reduced to the characters a subject token and a process id allow. */
export function defaultExecutorId(random: () => string = () => Math.random().toString(36).slice(2, 8)): string {
  const host =
    hostname()
      .replace(/[^A-Za-z0-9_-]/g, "-")
      .slice(0, 60) || "host";
  return `${host}-${process.pid}-${random()}`;
}

export function executorIdOf(config: ExecutorConfig): string {
  return config.MONIRO_EXECUTOR_ID ?? defaultExecutorId();
}

/** The catalog's exec limits from the environment (unset variables keep the catalog's defaults). */
export function execLimitsOf(config: ExecutorConfig): ExecLimits {
  const [uid, gid] = (config.MONIRO_EXEC_RUN_AS ?? "").split(":").map(Number);
  return execLimits({
    ...optional("defaultTimeoutMs", config.MONIRO_EXEC_TIMEOUT_MS),
    ...optional("maxTimeoutMs", config.MONIRO_EXEC_MAX_TIMEOUT_MS),
    ...optional("outputCapBytes", config.MONIRO_EXEC_OUTPUT_CAP_BYTES),
    ...optional("cpuSeconds", config.MONIRO_EXEC_CPU_SECONDS),
    ...optional("addressSpaceBytes", config.MONIRO_EXEC_MEMORY_BYTES),
    ...optional("maxProcesses", config.MONIRO_EXEC_MAX_PROCESSES),
    ...optional("fileSizeBytes", config.MONIRO_EXEC_FILE_SIZE_BYTES),
    ...optional("tmpBytes", config.MONIRO_EXEC_TMP_BYTES),
    ...optional("processIdleTtlMs", config.MONIRO_PROCESS_IDLE_TTL_MS),
    ...optional("maxBackgroundProcesses", config.MONIRO_MAX_BACKGROUND_PROCESSES),
    ...optional("maxBackgroundProcessesPerAgent", config.MONIRO_MAX_BACKGROUND_PROCESSES_PER_AGENT),
    ...(uid !== undefined && gid !== undefined && config.MONIRO_EXEC_RUN_AS ? { runAs: { uid, gid } } : {}),
  });
}

function optional<K extends string>(key: K, value: number | undefined): Partial<Record<K, number>> {
  return value === undefined ? {} : ({ [key]: value } as Record<K, number>);
}
