import { ConfigError } from "@moniro/config";
import { describe, expect, it } from "vitest";
import { defaultExecutorId, execLimitsOf, executorIdOf, loadExecutorConfig } from "./executor-config.js";

describe("executor config", () => {
  it("names the variable that is wrong", () => {
    expect(() => loadExecutorConfig({ MONIRO_TOOL_CONCURRENCY: "0" })).toThrow(ConfigError);
    expect(() => loadExecutorConfig({ MONIRO_TOOL_CONCURRENCY: "0" })).toThrow(/MONIRO_TOOL_CONCURRENCY/);
    expect(() => loadExecutorConfig({ MONIRO_EXECUTOR_ID: "host.example:1" })).toThrow(/MONIRO_EXECUTOR_ID: .*no dots/);
    expect(() => loadExecutorConfig({ MONIRO_EXEC_RUN_AS: "nobody" })).toThrow(
      /MONIRO_EXEC_RUN_AS: must be '<uid>:<gid>'/,
    );
    expect(() => loadExecutorConfig({ MONIRO_EXEC_UNSAFE_NO_SANDBOX: "maybe" })).toThrow(
      /MONIRO_EXEC_UNSAFE_NO_SANDBOX: '[^']*' is not true or false \(accepted, in any case: true\/false, 1\/0, yes\/no, on\/off\)/,
    );
    expect(() => loadExecutorConfig({ MONIRO_EXEC_RUN_AS: "0:0" })).toThrow(/MONIRO_EXEC_RUN_AS: must not be root/);
    expect(() => loadExecutorConfig({ MONIRO_MAX_BACKGROUND_PROCESSES_PER_AGENT: "0" })).toThrow(
      /MONIRO_MAX_BACKGROUND_PROCESSES_PER_AGENT/,
    );
    for (const bad of ["0", "512M", "-1"]) {
      expect(() => loadExecutorConfig({ MONIRO_EXEC_TMP_BYTES: bad }), bad).toThrow(/MONIRO_EXEC_TMP_BYTES/);
    }
  });

  it("sizes the sandbox's tmpfs mounts from MONIRO_EXEC_TMP_BYTES (512 MiB by default)", () => {
    expect(execLimitsOf(loadExecutorConfig({ MONIRO_EXEC_TMP_BYTES: "1048576" })).tmpBytes).toBe(1_048_576);
    expect(execLimitsOf(loadExecutorConfig({})).tmpBytes).toBe(512 * 1024 ** 2);
  });

  it("caps one agent's background processes (8 by default, MONIRO_MAX_BACKGROUND_PROCESSES_PER_AGENT)", () => {
    expect(execLimitsOf(loadExecutorConfig({})).maxBackgroundProcessesPerAgent).toBe(8);
    expect(
      execLimitsOf(loadExecutorConfig({ MONIRO_MAX_BACKGROUND_PROCESSES_PER_AGENT: "3" }))
        .maxBackgroundProcessesPerAgent,
    ).toBe(3);
  });

  it("refuses the removed bubblewrap switches, naming what replaces them", () => {
    expect(() => loadExecutorConfig({ MONIRO_EXEC_BWRAP: "false" })).toThrow(
      /MONIRO_EXEC_BWRAP: the sandbox is always on now.*MONIRO_EXEC_UNSAFE_NO_SANDBOX=true/,
    );
    expect(() => loadExecutorConfig({ MONIRO_EXEC_BWRAP_NETWORK: "true" })).toThrow(
      /MONIRO_EXEC_BWRAP_NETWORK: .*`tools: \{ network: true \}`/,
    );
    expect(loadExecutorConfig({}).MONIRO_EXEC_UNSAFE_NO_SANDBOX).toBe(false);
  });

  it("maps the exec variables onto the catalog's limits, keeping its defaults for the rest", () => {
    const config = loadExecutorConfig({
      MONIRO_EXEC_TIMEOUT_MS: "5000",
      MONIRO_EXEC_MAX_PROCESSES: "64",
      MONIRO_EXEC_RUN_AS: "65534:65534",
      MONIRO_PROCESS_IDLE_TTL_MS: "60000",
    });
    const limits = execLimitsOf(config);
    expect(limits).toMatchObject({
      defaultTimeoutMs: 5000,
      maxProcesses: 64,
      runAs: { uid: 65534, gid: 65534 },
      processIdleTtlMs: 60_000,
      outputCapBytes: 30_000,
    });
    expect(execLimitsOf(loadExecutorConfig({})).runAs).toBeUndefined();
    expect(config.MONIRO_TOOL_CONCURRENCY).toBe(16);
  });

  it("defaults the executor id to <host>-<pid>-<random>, usable as a subject token and a process id prefix", () => {
    const id = defaultExecutorId(() => "abc123");
    expect(id).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(id.endsWith(`-${process.pid}-abc123`)).toBe(true);
    expect(executorIdOf(loadExecutorConfig({ MONIRO_EXECUTOR_ID: "exec-a" }))).toBe("exec-a");
  });
});
