/**
 * The `fetch` the OpenAI SDK sends model calls with: node:http(s) with keep-alive agents instead of
 * Node's built-in fetch (undici), whose web streams and Request objects were a large share of a
 * worker's CPU and heap (docs/adr/0010-model-calls-over-node-http.md). Bodies other than a string (the
 * Batch API's uploads) go through the built-in fetch; no proxy variables are read; the reply is not
 * asked compressed. The caller passes where to tell a reply's arrival (`observer`: the attempt's
 * limiter slot, from endpoint.ts), so a 2xx frees its slot at once; this module knows no limiter.
 */
import { TransientError } from '../domain/errors.js';
import http from 'node:http';
import https from 'node:https';
import { normalizedErrorBody } from './errorBody.js';
import { UnusableReply } from './replyCheck.js';

// Sockets stay open between calls; the endpoint's limiter bounds how many are in use.
const agents = { 'http:': new http.Agent({ keepAlive: true }), 'https:': new https.Agent({ keepAlive: true }) };

/** Told of a request's progress: `stamp` marks events for tracing, `replied` the whole reply's arrival (status and headers). */
interface ReplyObserver {
  stamp(event: string): void;
  replied(status: number, headers: Headers): void;
}

/** The observer of the request being sent now (called as each request starts), if any. */
type ObserverOf = () => ReplyObserver | undefined;

const none: ObserverOf = () => undefined;

/**
 * The fetch, reading at most `maxReplyBytes` of a reply body: a larger one is dropped as it goes
 * past the cap (the connection is destroyed, nothing more is read or kept) and the fetch fails with
 * UnusableReply('reply-too-large'), which the SDK passes on as its error's cause. Each request
 * tells `observer()` its progress.
 */
export function replyLimitedFetch(maxReplyBytes: number, observer: ObserverOf = none): typeof fetch {
  return (input, init) => {
    const body = init?.body;
    if ((body !== undefined && body !== null && typeof body !== 'string') || (typeof input !== 'string' && !(input instanceof URL))) {
      return fetch(input, init);
    }
    return request(new URL(input), init ?? {}, body ?? undefined, maxReplyBytes, observer());
  };
}

function request(url: URL, init: RequestInit, body: string | undefined, maxReplyBytes: number, slot: ReplyObserver | undefined): Promise<Response> {
  const signal = init.signal ?? undefined;
  slot?.stamp('fetch');
  return new Promise<Response>((resolve, reject) => {
    if (signal?.aborted) return reject(abortError(signal));
    const transport = url.protocol === 'https:' ? https : http;
    const agent = agents[url.protocol as keyof typeof agents];
    if (!agent) return reject(new TypeError(`fetch: unsupported protocol ${url.protocol}`));
    const req = transport.request(url, { method: init.method ?? 'GET', headers: headerRecord(init.headers), agent }, (res) => {
      slot?.stamp('headers');
      const chunks: Buffer[] = [];
      let received = 0;
      res.on('data', (chunk: Buffer) => {
        received += chunk.length;
        if (received > maxReplyBytes) {
          res.destroy();
          req.destroy();
          fail(new UnusableReply('reply-too-large', `the reply went past ${maxReplyBytes} bytes (llm.maxReplyBytes), and was dropped unread from there`));
          return;
        }
        chunks.push(chunk);
      });
      // The headers came: a reply cut now is no connection failure (sendCompletion.ts names it).
      res.on('error', (err) => fail(new ReplyCut(received, err)));
      res.on('end', () => {
        slot?.stamp('body');
        signal?.removeEventListener('abort', onAbort);
        const status = res.statusCode ?? 0;
        const headers = new Headers();
        for (let i = 0; i < res.rawHeaders.length; i += 2) headers.append(res.rawHeaders[i]!, res.rawHeaders[i + 1]!);
        // A Response refuses a body with these statuses.
        const nullBody = status === 204 || status === 205 || status === 304;
        slot?.replied(status, headers);
        let replyBody = Buffer.concat(chunks);
        if (status >= 400) {
          // In the shape the SDK reads its message and `param` from (errorBody.ts).
          const normalized = normalizedErrorBody(replyBody.toString('utf8'));
          if (normalized !== undefined) {
            replyBody = Buffer.from(normalized);
            headers.delete('content-length');
          }
        }
        resolve(new Response(nullBody ? null : replyBody, { status, statusText: res.statusMessage ?? '', headers }));
      });
    });
    function fail(err: Error): void {
      signal?.removeEventListener('abort', onAbort);
      reject(err);
    }
    function onAbort(): void {
      req.destroy();
      reject(abortError(signal!));
    }
    signal?.addEventListener('abort', onAbort, { once: true });
    req.on('error', fail);
    if (slot) req.on('finish', () => slot.stamp('written'));
    req.end(body);
  });
}

/** The connection closed in the middle of a reply's body, after its headers: the request reached the endpoint. */
export class ReplyCut extends TransientError {
  override name = 'ReplyCut';
  constructor(received: number, cause: Error) {
    super(`the connection closed mid-reply (after ${received} bytes of the body: ${cause.message})`, { cause });
  }
}

/** What the built-in fetch rejects with on abort: an AbortError (the SDK tells timeouts by it). */
function abortError(signal: AbortSignal): Error {
  const reason: unknown = signal.reason;
  return reason instanceof Error && reason.name === 'AbortError' ? reason : new DOMException('This operation was aborted', 'AbortError');
}

function headerRecord(headers: HeadersInit | undefined): Record<string, string> {
  const record: Record<string, string> = {};
  if (!headers) return record;
  for (const [name, value] of headers instanceof Headers ? headers : new Headers(headers)) record[name] = value;
  return record;
}
