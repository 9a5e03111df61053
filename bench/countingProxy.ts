/**
 * A pass-through HTTP proxy on 127.0.0.1 in front of the simulator that remembers, per request body
 * (sha256 of its bytes), when the simulator answered it with a 200. With a kill time marked, it
 * tells how many requests answered before the kill were answered again after it: the re-sent ones.
 *
 * Body bytes are a fair key for both tools measured: mmif-engine serializes its request objects
 * with JSON.stringify in a fixed key order and curator with json.dumps of the same dict, so the same
 * request is the same bytes (the simulator's own request key would be finer, but it keeps no list).
 */
import { createHash } from 'node:crypto';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

interface CountingProxy {
  /** Base URL for OpenAI clients, ending in /v1. */
  url: string;
  /** From now on, 200s count as "after the kill". */
  markKill(): void;
  counts(): ProxyCounts;
  /** Requests answered more than once in the same phase, by kind (see `kindOf`): [kind, extra answers]. */
  duplicatesByKind(): Array<[string, number]>;
  /** Re-sent requests by kind: [kind, count]. */
  resentByKind(): Array<[string, number]>;
  close(): Promise<void>;
}

export interface ProxyCounts {
  /** Distinct requests answered (200) before the kill. */
  doneBeforeKill: number;
  /** 200s after the kill for requests already answered before it. */
  resentAfterKill: number;
  /** 200s after the kill for requests never answered before it. */
  newAfterKill: number;
  /** 200s for a body answered before in the same phase (a tool sending one request twice on its own). */
  duplicatesWithinPhase: number;
  /** The re-sent ones by kind of request (see `kindOf`). */
  resentKinds?: Record<string, number>;
  /** ms from the kill mark to the first answer to a request that arrived after it (the new process's first). */
  stallMs?: number;
}

export async function startCountingProxy(target: string): Promise<CountingProxy> {
  const upstream = new URL(target.replace(/\/v1\/?$/, ''));
  const agent = new http.Agent({ keepAlive: true, maxSockets: Number.POSITIVE_INFINITY });
  const before = new Set<string>();
  const after = new Set<string>();
  let killed = false;
  let killedAt = 0;
  let firstAnswerAfterKill: number | undefined;
  const counts: ProxyCounts = { doneBeforeKill: 0, resentAfterKill: 0, newAfterKill: 0, duplicatesWithinPhase: 0 };
  const duplicateKinds = new Map<string, number>();
  const resentKinds = new Map<string, number>();
  const duplicate = (body: Buffer) => {
    counts.duplicatesWithinPhase++;
    const kind = kindOf(body);
    duplicateKinds.set(kind, (duplicateKinds.get(kind) ?? 0) + 1);
  };

  const answered = (key: string, body: Buffer) => {
    if (!killed) {
      if (before.has(key)) duplicate(body);
      else before.add(key);
      counts.doneBeforeKill = before.size;
      return;
    }
    if (after.has(key)) duplicate(body);
    else if (before.has(key)) {
      counts.resentAfterKill++;
      const kind = kindOf(body);
      resentKinds.set(kind, (resentKinds.get(kind) ?? 0) + 1);
    } else counts.newAfterKill++;
    after.add(key);
  };

  const server = http.createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    const arrivedAfterKill = killed;
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const key = createHash('sha256').update(body).digest('hex');
      const headers = { ...req.headers, host: upstream.host };
      const forward = http.request({ host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers, agent }, (up) => {
        if (up.statusCode === 200 && req.url?.includes('/chat/completions')) {
          answered(key, body);
          if (arrivedAfterKill) firstAnswerAfterKill ??= Date.now();
        }
        res.writeHead(up.statusCode ?? 502, up.headers);
        up.pipe(res);
      });
      forward.on('error', () => res.destroy());
      // A client that dies mid-request (the kill) aborts the upstream call too, as a direct one would.
      res.on('close', () => {
        if (!res.writableFinished) forward.destroy();
      });
      forward.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    markKill: () => {
      killed = true;
      killedAt = Date.now();
    },
    counts: () => ({
      ...counts,
      resentKinds: Object.fromEntries(resentKinds),
      ...(firstAnswerAfterKill === undefined ? {} : { stallMs: firstAnswerAfterKill - killedAt }),
    }),
    duplicatesByKind: () => [...duplicateKinds].sort((a, b) => b[1] - a[1]),
    resentByKind: () => [...resentKinds].sort((a, b) => b[1] - a[1]),
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
        agent.destroy();
      }),
  };
}

/** A short label for a request: its response_format name, or the opening words of its last message. */
export function kindOf(body: Buffer): string {
  try {
    const request = JSON.parse(body.toString()) as {
      response_format?: { json_schema?: { name?: string } };
      messages: Array<{ content: string | Array<{ type: string; text?: string }> }>;
    };
    const format = request.response_format?.json_schema?.name;
    const image = JSON.stringify(request.messages).includes('"image_url"') ? ' +image' : '';
    if (format) return `json:${format}${image}`;
    const last = request.messages.at(-1)!.content;
    const text = typeof last === 'string' ? last : (last.find((p) => p.type === 'text')?.text ?? '');
    return `text:${text.replace(/\s+/g, ' ').trim().slice(0, 40)}${image}`;
  } catch {
    return 'unparsed';
  }
}
