/**
 * A dataset root given on the command line (`<output>/<buildId>`, a folder or an s3:// URI) as the
 * store of its output and the build's layout (the layout's keys start with the build id), and a
 * local HTTP server run until Ctrl-C: what `mmif view --serve` and `mmif reward serve` share.
 */
import type { Server } from 'node:http';
import { buildLayout, type BuildLayout } from '../storage/buildLayout.js';
import type { ObjectStore } from '../storage/objectStore.js';
import { openStore } from '../storage/openStore.js';
import { s3FromEnv } from './s3FromEnv.js';

export function openDatasetRoot(root: string): { store: ObjectStore; layout: BuildLayout; trimmed: string } {
  const trimmed = root.replace(/\/+$/, '');
  const buildId = trimmed.slice(trimmed.lastIndexOf('/') + 1);
  return { store: openStore(trimmed.slice(0, trimmed.length - buildId.length) || '.', s3FromEnv()), layout: buildLayout(buildId), trimmed };
}

/** Listens on host:port (0: a free port), prints `serving http://host:port/ (<what>; Ctrl-C stops)`, and closes on SIGINT or SIGTERM. */
export async function serveUntilStopped(server: Server, host: string, port: number, what: string): Promise<void> {
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(port, host, resolve));
  const address = server.address();
  console.log(`serving http://${host}:${typeof address === 'object' && address ? address.port : port}/ (${what}; Ctrl-C stops)`);
  await new Promise<void>((resolve) => process.once('SIGINT', resolve).once('SIGTERM', resolve));
  server.close();
}
