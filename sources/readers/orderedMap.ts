/**
 * fn over items with up to `window` calls in flight; results come out in input order. Sources use it
 * to resolve records that cost a GET each (sidecars, view hierarchies, data tables): on S3 that
 * latency, paid one record at a time, would dominate a full scan.
 */
export async function* orderedMap<T, U>(items: AsyncIterable<T>, window: number, fn: (item: T) => Promise<U>): AsyncGenerator<U> {
  const pending: Promise<U>[] = [];
  for await (const item of items) {
    const result = fn(item);
    result.catch(() => {}); // rethrown when its turn comes; this only stops an early "unhandled rejection"
    pending.push(result);
    if (pending.length >= window) yield await pending.shift()!;
  }
  while (pending.length > 0) yield await pending.shift()!;
}
