/**
 * A gRPC server that refuses every call as Temporal Cloud refuses a wrong API key: HTTP/2, a
 * trailers-only response with grpc-status 16 (UNAUTHENTICATED) and "Request unauthorized."
 * (gRPC over HTTP/2: https://github.com/grpc/grpc/blob/master/doc/PROTOCOL-HTTP2.md, Responses).
 * What the client and the worker make of a refused key can then be tested without a cloud account.
 */
import http2 from 'node:http2';
import type { AddressInfo } from 'node:net';

export async function startRefusingTemporal(): Promise<{ address: string; stop(): Promise<void> }> {
  const server = http2.createServer();
  const sessions = new Set<http2.ServerHttp2Session>();
  server.on('session', (session) => {
    sessions.add(session);
    session.once('close', () => sessions.delete(session));
  });
  server.on('stream', (stream) => {
    stream.respond({ ':status': 200, 'content-type': 'application/grpc', 'grpc-status': '16', 'grpc-message': 'Request unauthorized.' }, { endStream: true });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const stop = () =>
    new Promise<void>((resolve) => {
      server.close(() => resolve());
      for (const session of sessions) session.destroy(); // clients keep theirs open: close waits for them
    });
  return { address: `127.0.0.1:${port}`, stop };
}
