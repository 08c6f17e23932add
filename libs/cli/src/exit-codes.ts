/** The exit codes of `moniro` (docs/cli.md, "Exit codes"). */
export const EXIT = {
  ok: 0,
  /** Something failed: the gateway answered an error not listed below, a runner refused, a run failed. */
  failed: 1,
  /** Bad usage: an unknown command or option, a missing argument, an invalid value. */
  usage: 2,
  /** Nothing answers at the gateway's URL. */
  unreachable: 3,
  /** The gateway answered 404: no such agent (or route, or pairing code). */
  notFound: 4,
  /** The gateway answered 401 or 403: no or a wrong API key, or a refused origin. */
  unauthorized: 5,
  /** The gateway answers but cannot serve (503: NATS, Redis or a runner is away; or it is not ready). */
  unavailable: 6,
} as const;
export type ExitCode = (typeof EXIT)[keyof typeof EXIT];
