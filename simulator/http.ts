/** HTTP plumbing shared by the simulator's routes: OpenAI-style errors, JSON replies, bounded bodies. */
import type { IncomingMessage, ServerResponse } from 'node:http';

/** Carries an HTTP status and an OpenAI-style error body out of any handler depth. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly type: string = 'invalid_request_error',
    readonly code: string | null = null,
    readonly headers: Record<string, string> = {},
    readonly param: string | null = null,
  ) {
    super(message);
  }

  /** The `{ error: {...} }` body OpenAI sends with this status. */
  body() {
    return { error: { message: this.message, type: this.type, param: this.param, code: this.code } };
  }
}

/** Base64 images make chat bodies large; this only guards against runaway clients. */
export const MAX_JSON_BODY_BYTES = 64 * 1024 * 1024;

export async function readBody(req: IncomingMessage, maxBytes: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > maxBytes) {
      // The unread rest of the body makes the connection unusable, so ask the client to drop it.
      throw new HttpError(413, `Request body exceeds ${maxBytes} bytes.`, 'invalid_request_error', null, {
        connection: 'close',
      });
    }
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

export async function readJson(req: IncomingMessage): Promise<unknown> {
  const body = await readBody(req, MAX_JSON_BODY_BYTES);
  try {
    return JSON.parse(body.toString('utf8'));
  } catch {
    throw new HttpError(400, 'Request body is not valid JSON.');
  }
}

export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  send(res, status, JSON.stringify(body), 'application/json', headers);
}

export function send(res: ServerResponse, status: number, body: string | Buffer, contentType: string, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': contentType, 'content-length': Buffer.byteLength(body), ...headers });
  res.end(body);
}
