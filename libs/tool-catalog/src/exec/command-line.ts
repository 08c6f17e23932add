import type { ExecLimits } from "../limits.js";

/**
 * Builds argv for a sandboxed bash command: `prlimit` for resource limits
 * (when installed), inside `bwrap` when enabled and installed. Pure, so the
 * layering is unit-tested without the binaries.
 */
export interface CommandLineOptions {
  command: string;
  workspace: string;
  limits: ExecLimits;
  /** Resolved paths of the helpers, or undefined when not installed. */
  prlimitPath: string | undefined;
  bwrapPath: string | undefined;
}

export function prlimitArguments(limits: ExecLimits): string[] {
  const args: string[] = [];
  if (limits.cpuSeconds !== undefined) args.push(`--cpu=${limits.cpuSeconds}`);
  if (limits.addressSpaceBytes !== undefined) args.push(`--as=${limits.addressSpaceBytes}`);
  if (limits.maxProcesses !== undefined) args.push(`--nproc=${limits.maxProcesses}`);
  if (limits.fileSizeBytes !== undefined) args.push(`--fsize=${limits.fileSizeBytes}`);
  return args;
}

export function bwrapArguments(workspace: string, network: boolean): string[] {
  const args = [
    "--ro-bind",
    "/",
    "/",
    "--dev",
    "/dev",
    "--proc",
    "/proc",
    "--tmpfs",
    "/tmp",
    "--bind",
    workspace,
    workspace,
    "--chdir",
    workspace,
    "--unshare-all",
  ];
  if (network) args.push("--share-net");
  args.push("--die-with-parent");
  return args;
}

/** argv[0] is the program to spawn. */
export function commandLine(options: CommandLineOptions): string[] {
  const { limits } = options;
  let argv = ["bash", "--noprofile", "--norc", "-c", options.command];
  const limitArgs = prlimitArguments(limits);
  if (options.prlimitPath !== undefined && limitArgs.length > 0) {
    argv = [options.prlimitPath, ...limitArgs, "--", ...argv];
  }
  if (limits.bwrap.enabled && options.bwrapPath !== undefined) {
    argv = [options.bwrapPath, ...bwrapArguments(options.workspace, limits.bwrap.network), "--", ...argv];
  }
  return argv;
}
