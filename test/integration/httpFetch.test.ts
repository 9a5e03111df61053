import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import OpenAI from 'openai';
import { setTimeout as sleep } from 'node:timers/promises';
import { replyLimitedFetch } from '../../llm/httpFetch.js';
import { clientFor } from '../../llm/endpoint.js';
import { EndpointLimiter } from '../../llm/endpointLimiter.js';

const httpFetch = replyLimitedFetch(Infinity);

let server: http.Server;
let base: string;
let closedEarly = 0;

before(async () => {
  server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      if (req.url === '/slow') {
        res.on('close', () => void (res.writableEnded || closedEarly++));
        setTimeout(() => res.end('late'), 2_000).unref();
        return;
      }
      if (req.url === '/empty') return void res.writeHead(204).end();
      const status = req.url === '/busy' ? 429 : 200;
      res.writeHead(status, { 'content-type': 'application/json', 'x-ratelimit-remaining-requests': '7', 'retry-after': '2' });
      res.end(JSON.stringify({ method: req.method, auth: req.headers.authorization, body }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
after(() => new Promise<void>((r) => server.close(() => r())));

test('sends the body and headers and returns status, headers and the JSON reply as a Response', async () => {
  const res = await httpFetch(`${base}/v1/x`, { method: 'POST', headers: new Headers({ authorization: 'Bearer k' }), body: '{"a":"é"}' });
  assert.equal(res.status, 200);
  assert.equal(res.headers.get('x-ratelimit-remaining-requests'), '7');
  assert.deepEqual(await res.json(), { method: 'POST', auth: 'Bearer k', body: '{"a":"é"}' });
  const busy = await httpFetch(`${base}/busy`, { method: 'POST', body: '{}' });
  assert.deepEqual([busy.status, busy.ok, busy.headers.get('retry-after')], [429, false, '2']);
  assert.equal((await httpFetch(`${base}/empty`)).body, null);
});

test('an abort ends the request at once with an AbortError and closes the connection', async () => {
  const controller = new AbortController();
  const pending = httpFetch(`${base}/slow`, { method: 'POST', body: '{}', signal: controller.signal });
  setTimeout(() => controller.abort(), 100);
  // /slow answers after 2 s: an abort that did not end the request would resolve it instead.
  await assert.rejects(pending, (err: Error) => err.name === 'AbortError');
  await new Promise((r) => setTimeout(r, 100));
  assert.equal(closedEarly, 1);
});

test('the SDK reads statuses, errors and timeouts through it as through the built-in fetch', async () => {
  const client = new OpenAI({ baseURL: `${base}`, apiKey: 'k', maxRetries: 0, timeout: 300, fetch: httpFetch });
  const ok = await client.post('/v1/x', { body: { n: 1 } });
  assert.deepEqual(ok, { method: 'POST', auth: 'Bearer k', body: '{"n":1}' });
  await assert.rejects(client.post('/busy', { body: {} }), (err: unknown) => err instanceof OpenAI.RateLimitError && err.headers.get('retry-after') === '2');
  await assert.rejects(client.post('/slow', { body: {} }), OpenAI.APIConnectionTimeoutError);
  const down = new OpenAI({ baseURL: 'http://127.0.0.1:1', apiKey: 'k', maxRetries: 0, fetch: httpFetch });
  await assert.rejects(down.post('/x', { body: {} }), (err: unknown) => err instanceof OpenAI.APIConnectionError && !(err instanceof OpenAI.APIConnectionTimeoutError));
});

test('a 2xx reply frees its limiter slot as soon as it has arrived; a 429 holds it until the attempt ends', async () => {
  const limiter = new EndpointLimiter({ concurrency: 1 });
  // The SDK client as model calls use it: its fetch tells each request's attempt slot.
  const client = clientFor({ baseURL: base, model: 'm', apiKey: 'k', replicas: [{ baseURL: base, concurrency: 1 }] }, 5_000);
  const afterReply: string[] = [];
  const order: string[] = [];
  const call = (route: string) =>
    limiter.run(0, async () => {
      order.push(`${route} sent`);
      await client.post(route, { body: {} }).catch((err: unknown) => assert.ok(err instanceof OpenAI.RateLimitError));
      const { inFlight, queued } = limiter.snapshot();
      afterReply.push(`${inFlight} in flight, ${queued} queued`);
      await sleep(100); // the caller's own work on the reply
      order.push(`${route} done`);
    });
  await Promise.all([call('/v1/x'), call('/v1/y')]);
  // The second request went while the first's caller was still busy with its reply.
  assert.deepEqual(order, ['/v1/x sent', '/v1/y sent', '/v1/x done', '/v1/y done']);
  order.length = 0;
  await Promise.all([call('/busy'), call('/v1/z')]);
  assert.deepEqual(order, ['/busy sent', '/busy done', '/v1/z sent', '/v1/z done']);
  // Freed by the 2xx: the next request is in flight in its place; held by the 429: the next one waits.
  assert.deepEqual(afterReply, ['1 in flight, 0 queued', '0 in flight, 0 queued', '1 in flight, 1 queued', '0 in flight, 0 queued']);
});
