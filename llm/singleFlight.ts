/**
 * Single-flight: a model request identical to one already in flight in this worker process is not
 * sent again; it waits for the first one's reply and is then answered from the model-call cache
 * like any repeat (modelCaller.ts). The cache alone serves a repeat made after the first reply is
 * stored; two samples, slices or builds sharing a cache that ask the same thing at the same moment
 * (a Fig. 20 verifier selection for two alike constraints, at temperature 0) would both be paid.
 *
 * Per process only, keyed by the cache store and the cache key: two worker processes can still
 * both pay for one request (docs/cost.md says why no claim is kept across workers).
 */
import type { ObjectStore } from '../storage/objectStore.js';

/** The requests in flight per cache store, by cache key: what each one's sender will settle. */
const inFlight = new WeakMap<ObjectStore, Map<string, Promise<unknown>>>();

function flightsOf(store: ObjectStore): Map<string, Promise<unknown>> {
  let flights = inFlight.get(store);
  if (!flights) inFlight.set(store, (flights = new Map()));
  return flights;
}

/** The request in flight under this key in this process, if any. */
export function flightOf(store: ObjectStore, key: string): Promise<unknown> | undefined {
  return inFlight.get(store)?.get(key);
}

/**
 * Runs `send` as the request in flight under this key until it settles. Registered before `send`
 * reaches its first await, so a caller that found no flight and no cached reply is seen by the next.
 */
export function fly<T>(store: ObjectStore, key: string, send: () => Promise<T>): Promise<T> {
  const flights = flightsOf(store);
  const flight = send();
  flights.set(key, flight);
  const land = () => {
    if (flights.get(key) === flight) flights.delete(key);
  };
  flight.then(land, land);
  return flight;
}

/**
 * Waits until a flight settles, whether it succeeded or not (a failed or cancelled first request
 * leaves nothing in the cache: the waiter then sends its own). The waiter's own cancellation ends
 * the wait at once, with the abort's reason.
 */
export async function landed(flight: Promise<unknown>, signal: AbortSignal | undefined): Promise<void> {
  if (!signal) return void (await flight.catch(() => undefined));
  signal.throwIfAborted();
  await new Promise<void>((resolve, reject) => {
    const abort = () => reject(signal.reason as Error);
    signal.addEventListener('abort', abort, { once: true });
    const done = () => {
      signal.removeEventListener('abort', abort);
      resolve();
    };
    flight.then(done, done);
  });
}
