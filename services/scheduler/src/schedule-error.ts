/** A request that is well-formed but cannot be carried out; `field` names what to change. */
export class ScheduleError extends Error {
  override readonly name = "ScheduleError";
  constructor(
    readonly field: string,
    readonly reason: string,
  ) {
    super(`${field}: ${reason}`);
  }
}
