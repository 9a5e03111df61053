/**
 * A loopback endpoint that misbehaves the way real gateways and proxies do, in front of an honest
 * one (the simulator): it forwards every request and, as configured (and reconfigurable between
 * tests with `set`), echoes the caller's key in a refusal, rewrites the usage a reply reports,
 * answers 429 with any Retry-After, closes the socket in the middle of a reply's body, or replaces a
 * reply's content. It counts the chat requests it was sent and those answered 200 (what a provider
 * bills), and the largest request body, so tests see what the engine paid and sent, not what it
 * says it did.
 */
import { createServer, request, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Hostility {
  /**
   * Requests carrying `temperature` are refused (400, param `temperature`) with a message that echoes
   * the request's Authorization header as is, base64-encoded and URL-encoded, as some gateways do.
   */
  echoKey?: boolean;
  /** Each 200 reply's `usage` object is replaced by what this returns for it. */
  usage?: (usage: Record<string, unknown>) => unknown;
  /** The next `times` chat requests are answered 429 with these headers. */
  rateLimit?: { headers: Record<string, string>; times: number };
  /** The next `times` 200 replies are cut: headers and half the body sent, then the socket destroyed. */
  cutMidBody?: { times: number };
  /** Each 200 reply's message content is replaced by what this returns for it. */
  content?: (content: string) => string;
}

export interface HostileEndpoint {
  /** The endpoint's OpenAI-style base URL (ending in /v1). */
  url: string;
  /** Replaces the hostility (counters go on). */
  set(hostility: Hostility): void;
  /** Chat requests received, answered 200 in full (billed), and the largest request body in bytes, since the start or the last reset. */
  counts(): { requests: number; paid: number; largestRequestBytes: number };
  reset(): void;
  close(): Promise<void>;
}

/** `upstream`: the honest endpoint's base URL, ending in /v1. */
export async function startHostileEndpoint(upstream: string, initial: Hostility = {}): Promise<HostileEndpoint> {
  let hostility = { ...initial };
  let counts = { requests: 0, paid: 0, largestRequestBytes: 0 };
  const origin = upstream.replace(/\/v1$/, '');

  const answer = (req: IncomingMessage, res: ServerResponse, body: Buffer) => {
    const chat = req.url?.endsWith('/chat/completions') ?? false;
    if (chat) {
      counts.requests++;
      counts.largestRequestBytes = Math.max(counts.largestRequestBytes, body.length);
      const refusal = refusalOf(req, body);
      if (refusal) return res.writeHead(refusal.status, refusal.headers).end(JSON.stringify(refusal.body));
    }
    const forwarded = request(`${origin}${req.url}`, { method: req.method, headers: req.headers }, (reply) => {
      const chunks: Buffer[] = [];
      reply.on('data', (c: Buffer) => chunks.push(c));
      reply.on('end', () => {
        let text = Buffer.concat(chunks);
        if (chat && reply.statusCode === 200) text = Buffer.from(rewritten(text.toString('utf8')));
        const headers = { ...reply.headers, 'content-length': String(text.length) };
        res.writeHead(reply.statusCode ?? 502, headers);
        if (chat && reply.statusCode === 200 && hostility.cutMidBody && hostility.cutMidBody.times > 0) {
          hostility.cutMidBody.times--;
          res.write(text.subarray(0, text.length >> 1), () => res.destroy());
          return;
        }
        if (chat && reply.statusCode === 200) counts.paid++;
        res.end(text);
      });
    });
    forwarded.end(body);
  };

  const refusalOf = (req: IncomingMessage, body: Buffer): { status: number; headers: Record<string, string>; body: unknown } | undefined => {
    const limited = hostility.rateLimit;
    if (limited && limited.times > 0) {
      limited.times--;
      return { status: 429, headers: { 'content-type': 'application/json', ...limited.headers }, body: { error: { message: 'Rate limit reached', type: 'requests' } } };
    }
    if (hostility.echoKey && 'temperature' in (JSON.parse(body.toString('utf8')) as object)) {
      const authorization = req.headers.authorization ?? '';
      const echoes = [authorization, Buffer.from(authorization).toString('base64'), encodeURIComponent(authorization)].join(' | ');
      const message = `Unsupported parameter: 'temperature' is not supported with this model (request headers: ${echoes})`;
      return { status: 400, headers: { 'content-type': 'application/json' }, body: { error: { message, type: 'invalid_request_error', param: 'temperature', code: null } } };
    }
    return undefined;
  };

  const rewritten = (text: string): string => {
    if (!hostility.usage && !hostility.content) return text;
    const completion = JSON.parse(text) as { usage: Record<string, unknown>; choices: Array<{ message: { content: string } }> };
    if (hostility.usage) completion.usage = hostility.usage(completion.usage) as Record<string, unknown>;
    if (hostility.content) for (const choice of completion.choices) choice.message.content = hostility.content(choice.message.content);
    return JSON.stringify(completion);
  };

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => answer(req, res, Buffer.concat(chunks)));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    set: (next) => (hostility = { ...next }),
    counts: () => ({ ...counts }),
    reset: () => (counts = { requests: 0, paid: 0, largestRequestBytes: 0 }),
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
