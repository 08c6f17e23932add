/** Runs `publish(i)` for i in [0, count) with at most `concurrency` in flight. */
export async function publishAll(
  count: number,
  concurrency: number,
  publish: (i: number) => Promise<unknown>,
): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < count) await publish(next++);
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, worker));
}
