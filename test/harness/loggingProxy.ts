/**
 * A loopback HTTP proxy in front of an endpoint (the simulator) that logs, in the order they happen,
 * each request sent and each reply received, with the request kind the simulator would see, when, and
 * a digest of the body: tests read from it how requests overlapped, which the endpoint's own counters
 * cannot tell.
 */
import { createHash } from 'node:crypto';
import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { REQUEST_KIND_HEADER } from '../../domain/promptKinds.js';
import { detectKind, type ChatRequest } from '../../simulator/replies.js';

export interface ProxyEvent {
  /** The request kind (simulator/replies.ts detectKind), or 'other' for anything but a chat completion. */
  stage: string;
  event: 'sent' | 'replied';
  /** performance.now() when it happened. */
  at: number;
  /** sha256 of the request body: the same request sent twice has the same digest. */
  body: string;
}

export interface LoggingProxy {
  /** The proxy's OpenAI-style base URL (ending in /v1). */
  url: string;
  /** The events logged since the last take (or the start), and a fresh log from now on. */
  take(): ProxyEvent[];
  close(): Promise<void>;
}

/** `upstream`: the endpoint's base URL, ending in /v1. */
export async function startLoggingProxy(upstream: string): Promise<LoggingProxy> {
  let events: ProxyEvent[] = [];
  const origin = upstream.replace(/\/v1$/, '');
  const proxy = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const stage = req.url?.endsWith('/chat/completions') ? detectKind(JSON.parse(body.toString('utf8')) as ChatRequest, req.headers[REQUEST_KIND_HEADER]) : 'other';
      const digest = createHash('sha256').update(body).digest('hex');
      // Logged into the log current when the request came: a take() in between leaves its reply with it.
      const log = events;
      log.push({ stage, event: 'sent', at: performance.now(), body: digest });
      const forwarded = request(`${origin}${req.url}`, { method: req.method, headers: req.headers }, (reply) => {
        res.writeHead(reply.statusCode ?? 502, reply.headers);
        reply.pipe(res);
        reply.on('end', () => log.push({ stage, event: 'replied', at: performance.now(), body: digest }));
      });
      forwarded.end(body);
    });
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}/v1`,
    take: () => {
      const taken = events;
      events = [];
      return taken;
    },
    close: async () => {
      proxy.closeAllConnections();
      await new Promise((resolve) => proxy.close(resolve));
    },
  };
}
