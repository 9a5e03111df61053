/**
 * Runs `fn` over `items` with at most `limit` in flight and waits for all of them, even when some
 * fail, so finished work is never abandoned mid-write. Rejects with the first failure afterwards.
 * Deterministic and dependency-free: workflow code uses it too.
 */
export async function mapLimit<T, R>(items: readonly T[], limit: number, fn: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  const failures: unknown[] = [];
  let next = 0;
  async function lane(): Promise<void> {
    while (next < items.length) {
      const index = next++;
      try {
        results[index] = await fn(items[index]!, index);
      } catch (err) {
        failures.push(err);
      }
    }
  }
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, lane));
  if (failures.length > 0) throw failures[0];
  return results;
}
