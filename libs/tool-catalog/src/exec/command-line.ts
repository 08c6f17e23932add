import { type ExecLimits, execLimits } from "../limits.js";
import type { SystemLayout } from "./system-layout.js";

/**
 * Builds argv for a command: `bwrap` (the sandbox) around `bash -c`, whose
 * first act is `ulimit` (the resource limits, set inside the sandbox's user
 * namespace so the process cap counts this call's processes only). Without
 * the sandbox (the unsafe opt-out), `prlimit` around `bash -c`. Pure, so the
 * layering is unit-tested without the binaries.
 */
export interface CommandLineOptions {
  command: string;
  workspace: string;
  limits: ExecLimits;
  /** Resolved path of prlimit, or undefined when not installed (only the unsafe opt-out uses it). */
  prlimitPath: string | undefined;
  /** The sandbox to run in; undefined only for the explicit unsafe opt-out. */
  bubblewrap: BubblewrapOptions | undefined;
}

export interface BubblewrapOptions {
  bwrapPath: string;
  layout: SystemLayout;
  /** Keep the host's network (the agent's tool policy says `network: true`). */
  network: boolean;
  /** A copy of the whitelisted /etc entries (etc-copy.ts) bound at /etc in one mount; else one bind per entry. */
  etcDir?: string | undefined;
}

export function prlimitArguments(limits: ExecLimits): string[] {
  const args: string[] = [];
  if (limits.cpuSeconds !== undefined) args.push(`--cpu=${limits.cpuSeconds}`);
  if (limits.addressSpaceBytes !== undefined) args.push(`--as=${limits.addressSpaceBytes}`);
  if (limits.maxProcesses !== undefined) args.push(`--nproc=${limits.maxProcesses}`);
  if (limits.fileSizeBytes !== undefined) args.push(`--fsize=${limits.fileSizeBytes}`);
  return args;
}

/**
 * A minimal read-only root (/usr, the program and library dirs, whitelisted
 * /etc files), a fresh /proc of its own PID namespace, a minimal /dev, a
 * private /tmp and /var/tmp, and the workspace as the only writable host
 * path. Every
 * namespace is new (no network but `lo` unless `network`); the tree dies
 * with bwrap's parent; `--new-session` keeps the command off the executor's
 * terminal.
 */
export function bwrapArguments(
  workspace: string,
  options: Omit<BubblewrapOptions, "bwrapPath">,
  tmpBytes = execLimits().tmpBytes,
): string[] {
  // --disable-userns (bubblewrap 0.8+, needs an explicit --unshare-user): no nested user namespace
  // inside the sandbox, which would hand the command the kernel surface of a namespace "root".
  const args = ["--unshare-all", "--unshare-user", "--disable-userns"];
  if (options.network) args.push("--share-net");
  args.push("--die-with-parent", "--new-session", "--ro-bind", "/usr", "/usr");
  for (const entry of options.layout.topLevel) {
    if (entry.symlinkTo !== undefined) args.push("--symlink", entry.symlinkTo, entry.path);
    else args.push("--ro-bind", entry.path, entry.path);
  }
  if (options.etcDir !== undefined) args.push("--ro-bind", options.etcDir, "/etc");
  else for (const path of options.layout.etc) args.push("--ro-bind-try", path, path);
  // The writable tmpfs mounts are the call's own, each of tmpBytes (memory): full, they say ENOSPC.
  const size = ["--size", String(tmpBytes)];
  args.push("--proc", "/proc", "--dev", "/dev", ...size, "--tmpfs", "/dev/shm");
  args.push(...size, "--tmpfs", "/tmp", ...size, "--tmpfs", "/var/tmp");
  args.push("--bind", workspace, workspace, "--chdir", workspace);
  // The sandbox's own root and its /dev (tmpfs holding the mount points and device nodes, unbounded) are
  // read-only too: nothing but the workspace, /tmp, /var/tmp and /dev/shm is writable.
  args.push("--remount-ro", "/dev", "--remount-ro", "/");
  return args;
}

/**
 * The same limits as bash's `ulimit` arguments (one call, hard and soft):
 * CPU seconds, address space and file size in KiB (bash's unit for `-v` and
 * `-f` outside POSIX mode, which the scrubbed environment never turns on),
 * processes. Set by the sandbox's own shell before anything else runs, so the
 * sandbox needs no `prlimit` process: one exec fewer per call.
 */
export function ulimitArguments(limits: ExecLimits): string[] {
  const args: string[] = [];
  if (limits.cpuSeconds !== undefined) args.push("-t", String(limits.cpuSeconds));
  if (limits.addressSpaceBytes !== undefined) args.push("-v", String(Math.floor(limits.addressSpaceBytes / 1024)));
  if (limits.maxProcesses !== undefined) args.push("-u", String(limits.maxProcesses));
  if (limits.fileSizeBytes !== undefined) args.push("-f", String(Math.floor(limits.fileSizeBytes / 1024)));
  return args;
}

/**
 * The descriptor of the start gate (see GATE_SCRIPT): one socket pair (what
 * Node's `pipe` stdio is), both ways: the command says ready on it, the
 * executor answers with the go.
 */
export const GATE_FD = 3;

/**
 * Node opens its own descriptors close-on-exec, but neither its spawn nor
 * bwrap closes the others: one the executor holds without close-on-exec (left open by whatever started it: a process
 * manager, a test harness, a shell's `20>file`) would reach the command,
 * which could read, write or send through it (a root-only file, a log, a
 * socket to Redis) from its sandbox, as nobody, without the network. So the
 * sandbox's shell closes every descriptor above 2 it finds in its own
 * /proc/self/fd (the sandbox's fresh procfs) before the command runs: bash
 * builtins only (a glob and `exec {fd}<&-`), no process. A listing that is
 * not a list of numbers (/proc unreadable) ends the shell (125) without
 * running the command. The sandbox's init (bwrap, its PID 1) closes what it
 * inherited itself.
 */
const CLOSE_INHERITED = `for __moniro_fd in /proc/self/fd/*; do __moniro_fd=\${__moniro_fd##*/}; case $__moniro_fd in ""|*[!0-9]*) exit 125;; esac; ((__moniro_fd > 2)) && exec {__moniro_fd}<&-; done;`;

/**
 * bwrap arms `--die-with-parent` only once its namespaces exist (a few ms
 * after it is spawned), and the sandbox's init later still: an executor
 * killed before that would leave the sandbox running. So the command first
 * says it is ready (by then every bwrap process is armed: the init arms
 * itself right after forking the command, which still has to exec bash and
 * set its limits) and then waits for the executor's go on the gate. An
 * executor that died before sending it closed its end of the gate: the read
 * fails and the command never runs. Then the shell closes every descriptor
 * but 0, 1 and 2 (CLOSE_INHERITED), the gate's included, and the command
 * text runs through `eval` of the same shell, with no positional
 * parameters. The limits come first (`ulimitArguments`); a limit that cannot
 * be set ends the shell (126) before it says ready, so no command ever runs
 * without them.
 */
const GATE_SCRIPT = `printf r >&${GATE_FD}; IFS= read -r -n 1 -u ${GATE_FD} __moniro_gate || exit 125; ${CLOSE_INHERITED} __moniro_command=$1; set --; eval "unset __moniro_gate __moniro_command __moniro_fd
$__moniro_command"`;

/** The gate script with the limits in front (the arguments are numbers: nothing to quote). */
export function gateScript(limits: ExecLimits): string {
  const ulimit = ulimitArguments(limits);
  return ulimit.length === 0 ? GATE_SCRIPT : `ulimit ${ulimit.join(" ")} || exit 126; ${GATE_SCRIPT}`;
}

/** argv[0] is the program to spawn. */
export function commandLine(options: CommandLineOptions): string[] {
  if (options.bubblewrap !== undefined) {
    const { bwrapPath, ...rest } = options.bubblewrap;
    const shell = ["bash", "--noprofile", "--norc", "-c", gateScript(options.limits), "bash", options.command];
    return [bwrapPath, ...bwrapArguments(options.workspace, rest, options.limits.tmpBytes), "--", ...shell];
  }
  const argv = ["bash", "--noprofile", "--norc", "-c", options.command];
  const limitArgs = prlimitArguments(options.limits);
  return options.prlimitPath !== undefined && limitArgs.length > 0
    ? [options.prlimitPath, ...limitArgs, "--", ...argv]
    : argv;
}
