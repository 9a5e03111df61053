/**
 * What users run in front of data-parallel replicas today: a round-robin HTTP balancer (nginx's
 * default upstream method; a connection refused tries the next replica, as nginx's default
 * `proxy_next_upstream error timeout` does: https://nginx.org/en/docs/http/ngx_http_upstream_module.html,
 * https://nginx.org/en/docs/http/ngx_http_proxy_module.html#proxy_next_upstream). It forwards each
 * request as it came to the next replica in turn, so a sample's requests land on up to N replicas
 * and each replica's caches (simulator/visionCache.ts, promptCache.ts) see only its share. Used by
 * `mmif simulator --replicas N --balancer round-robin` and bench/replicas.ts; `GET /admin/balancer`
 * answers how many requests each replica was sent.
 */
import { createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { HttpError, MAX_JSON_BODY_BYTES, readBody, sendJson } from './http.js';

export const BALANCER_MODES = ['round-robin'] as const;
export type BalancerMode = (typeof BALANCER_MODES)[number];

export interface BalancerHandle {
  /** Base URL for OpenAI clients, ending in /v1. */
  url: string;
  /** Requests sent to each replica, in the order of the replicas given. */
  sent(): number[];
  close(): Promise<void>;
}

/** A round-robin balancer on 127.0.0.1 in front of `replicas` (base URLs ending in /v1). */
export async function startBalancer(replicas: string[], options: { port?: number; host?: string } = {}): Promise<BalancerHandle> {
  const upstreams = replicas.map((url) => new URL(url));
  const sent = upstreams.map(() => 0);
  let next = 0;
  const server = createServer((req, res) => {
    if (req.method === 'GET' && req.url === '/admin/balancer') return sendJson(res, 200, { mode: 'round-robin', replicas, sent });
    readBody(req, MAX_JSON_BODY_BYTES).then(
      (body) => forward(req, res, body, next++ % upstreams.length, upstreams.length),
      (error: unknown) => (error instanceof HttpError ? sendJson(res, error.status, error.body(), error.headers) : res.destroy()),
    );
  });
  /** Sends to replica `at`; a refused connection goes on to the next, `left` tries in all. */
  const forward = (req: IncomingMessage, res: ServerResponse, body: Buffer, at: number, left: number): void => {
    const upstream = upstreams[at]!;
    sent[at]!++;
    const out = httpRequest({ host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: { ...req.headers, host: upstream.host } }, (reply) => {
      res.writeHead(reply.statusCode ?? 502, reply.headers);
      reply.pipe(res);
    });
    out.once('error', (error: NodeJS.ErrnoException) => {
      if (res.headersSent) return void res.destroy();
      if (left > 1 && error.code === 'ECONNREFUSED') return forward(req, res, body, (at + 1) % upstreams.length, left - 1);
      sendJson(res, 502, { error: { message: `Simulated balancer: no replica answered (${error.message})`, type: 'server_error', code: 'bad_gateway' } });
    });
    // The client leaving drops the replica's request too, as a proxy does.
    res.once('close', () => {
      if (!res.writableFinished) out.destroy();
    });
    out.end(body);
  };
  const host = options.host ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${host}:${port}/v1`,
    sent: () => [...sent],
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      }),
  };
}
