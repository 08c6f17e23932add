export type CheckResult = { ok: true } | { ok: false; reason: string };

/**
 * Whether the signal-cli daemon answers `GET /api/v1/check` (200, empty body).
 * Used by /readyz while Signal is configured; never throws.
 */
export async function checkSignalCli(
  baseUrl: string,
  fetchImpl: typeof fetch = fetch,
  timeoutMs = 2_000,
): Promise<CheckResult> {
  const url = new URL("/api/v1/check", baseUrl).toString();
  try {
    const response = await fetchImpl(url, { signal: AbortSignal.timeout(timeoutMs) });
    return response.ok ? { ok: true } : { ok: false, reason: `signal-cli answered ${response.status} at ${url}` };
  } catch (error) {
    return { ok: false, reason: `signal-cli not reachable at ${url}: ${(error as Error).message}` };
  }
}
