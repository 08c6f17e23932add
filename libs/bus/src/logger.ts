/** The slice of a logger the bus writes to (pino satisfies it; tests pass a fake). */
export interface BusLogger {
  debug(fields: object, message?: string): void;
  info(fields: object, message?: string): void;
  warn(fields: object, message?: string): void;
  error(fields: object, message?: string): void;
}

export const silentBusLogger: BusLogger = { debug() {}, info() {}, warn() {}, error() {} };

export function errorMessage(error: unknown): string {
  return (error as Error)?.message || String(error);
}
