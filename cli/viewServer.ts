/**
 * The HTTP server of `mmif view --serve`: the viewer page, its data files and the build's
 * content-addressed images, nothing else of the store. It answers only requests whose Host header names the address it serves
 * (127.0.0.1 or localhost on its port, or the `--host` given): a page on another site that points
 * its own DNS name at 127.0.0.1 (DNS rebinding) sends its own name as Host and is refused, so it
 * cannot read the dataset through the user's browser. The same defence as webpack-dev-server's
 * `allowedHosts` and Vite's `server.allowedHosts` (https://vite.dev/config/server-options#server-allowedhosts).
 */
import { createServer, type Server } from 'node:http';
import type { ViewerFile } from '../output/viewer/viewerPage.js';
import type { BuildLayout } from '../storage/buildLayout.js';
import { StoreError, type ObjectStore } from '../storage/objectStore.js';

/**
 * Only content-addressed images (a record's under images/, a rejected sample's staged under
 * _work/images/) and the viewer's own files are served: no other path of the store is reachable.
 */
const IMAGE_PATH = /^\/(_work\/)?images\/[0-9a-f]{2}\/[0-9a-f]{64}\.jpg$/;

const LOOPBACK_NAMES = ['127.0.0.1', 'localhost'];

/** Whether a request's Host header names the served address: `host:port` (a loopback host by either name). */
export function hostAllowed(header: string | undefined, host: string, port: number): boolean {
  if (!header) return false;
  const names = LOOPBACK_NAMES.includes(host) ? LOOPBACK_NAMES : [host];
  return names.some((name) => header.toLowerCase() === `${name}:${port}`.toLowerCase());
}

/** `files`: the page and its data, by served path (`/viewer.html` is also `/`). */
export function viewerServer(store: ObjectStore, layout: BuildLayout, files: ReadonlyMap<string, ViewerFile>, host: string): Server {
  const server = createServer((req, res) => {
    const address = server.address();
    const port = typeof address === 'object' && address ? address.port : 0;
    if (!hostAllowed(req.headers.host, host, port)) {
      res.writeHead(403, { 'content-type': 'text/plain' }).end(`mmif view serves ${host}:${port} only\n`);
      return;
    }
    const url = new URL(req.url ?? '/', `http://${host}`);
    const file = files.get(url.pathname === '/' ? '/viewer.html' : url.pathname);
    if (file) {
      res.writeHead(200, { 'content-type': `${file.contentType}; charset=utf-8` }).end(file.body);
      return;
    }
    if (!IMAGE_PATH.test(url.pathname)) {
      res.writeHead(404).end();
      return;
    }
    store.get(`${layout.root}${url.pathname}`).then(
      (bytes) => (bytes ? res.writeHead(200, { 'content-type': 'image/jpeg' }).end(bytes) : res.writeHead(404).end()),
      (err: unknown) => {
        // The body names the requested path only: the store's message holds its root and a link's target.
        if (err instanceof StoreError && err.code === 'escapes-root') {
          res.writeHead(403, { 'content-type': 'text/plain' }).end(`${url.pathname} leads outside the dataset; not served\n`);
          return;
        }
        console.error(`mmif view: ${url.pathname}: ${err instanceof Error ? err.message : String(err)}`);
        res.writeHead(500, { 'content-type': 'text/plain' }).end(`${url.pathname} could not be read (the server's terminal says why)\n`);
      },
    );
  });
  return server;
}
