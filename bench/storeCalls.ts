/**
 * Counts a process's outgoing HTTP requests by method, port and key shape (ids and hex folders as
 * `*`) and its TCP connections by port: how many store operations, and connections, a model request
 * costs (bench/notes/2026-11-28-worker-cpu-per-request.md, ADRs 0080 and 0081). Installed by
 * bench/benchWorker.ts when BENCH_STORE_CALLS names a file, before anything sends; it wraps Node's
 * `http.request`, which the AWS SDK's handler and llm/httpFetch.ts call at request time, and
 * `net.Socket.prototype.connect`, which every client connection goes through.
 */
import http from 'node:http';
import { syncBuiltinESMExports } from 'node:module';
import net from 'node:net';

export type StoreCalls = Record<string, number>;

/** `/bucket/out/build/_work/samples/cc3m-1a2b/image.json?x` -> `out/*\/_work/samples/*\/image.json` (6 segments after the bucket at most). */
export function keyShape(requestPath: string): string {
  const segments = requestPath.split('?')[0]!.split('/').slice(2, 8);
  return segments.map((s) => (/^[0-9a-f]{2}$/.test(s) || /[0-9a-f]{12,}|\d{3,}/.test(s) ? '*' : s)).join('/');
}

/** The counts of several processes, per model request (`POST`s to `modelPort`), largest first: `[key, count per request]`. */
export function perModelRequest(all: readonly StoreCalls[], modelRequests: number): Array<[string, number]> {
  const sum: StoreCalls = {};
  for (const counts of all) for (const [key, n] of Object.entries(counts)) sum[key] = (sum[key] ?? 0) + n;
  return Object.entries(sum)
    .map(([key, n]): [string, number] => [key, n / modelRequests])
    .sort((a, b) => b[1] - a[1]);
}

/** Starts counting; returns the counts so far, `connect <port>` and `<METHOD> <port> <key shape>`. */
export function countStoreCalls(): () => StoreCalls {
  const counts: StoreCalls = {};
  const bump = (key: string) => (counts[key] = (counts[key] ?? 0) + 1);
  const connect = net.Socket.prototype.connect;
  net.Socket.prototype.connect = function (this: net.Socket, ...args: unknown[]) {
    // net.connect() hands the socket its normalized arguments, [options, callback].
    const first = Array.isArray(args[0]) ? args[0][0] : args[0];
    bump(`connect ${typeof first === 'number' ? first : ((first as { port?: number } | undefined)?.port ?? '?')}`);
    return (connect as (...a: unknown[]) => net.Socket).apply(this, args);
  } as typeof connect;
  const request = http.request;
  http.request = function (...args: unknown[]) {
    // http.request(options[, cb]) or http.request(url[, options][, cb]): the URL, when given, names port and path.
    const url = typeof args[0] === 'string' || args[0] instanceof URL ? new URL(args[0]) : undefined;
    const options = (url ? (typeof args[1] === 'object' ? args[1] : {}) : args[0]) as http.RequestOptions;
    bump(`${options.method ?? 'GET'} ${url?.port ?? options.port} ${keyShape(url?.pathname ?? options.path ?? '')}`);
    return (request as (...a: unknown[]) => http.ClientRequest)(...args);
  } as typeof http.request;
  syncBuiltinESMExports(); // `import { request } from 'node:http'` sees the wrapper too
  return () => ({ ...counts });
}
