/**
 * `mmif view --serve` answers only requests for the address it serves: a request naming another
 * host (a DNS-rebinding page sends its own name) is refused, on the page and on the images alike.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { request, type Server } from 'node:http';
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { hostAllowed, viewerServer } from '../../cli/viewServer.js';
import { buildLayout } from '../../storage/buildLayout.js';
import { LocalStore } from '../../storage/localStore.js';

const IMAGE = `/images/ab/${'ab'.repeat(32)}.jpg`;
/** A symbolic link to a file outside the dataset, and a folder where an image should be. */
const LINKED = `/images/cd/${'cd'.repeat(32)}.jpg`;
const FOLDER = `/images/ef/${'ef'.repeat(32)}.jpg`;
let dir: string;
let outside: string;
let server: Server;
let port: number;

before(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'mmif-view-'));
  const store = new LocalStore(dir);
  const layout = buildLayout('b');
  await store.put(`${layout.root}${IMAGE}`, Buffer.from('jpeg bytes'));
  outside = await mkdtemp(path.join(tmpdir(), 'mmif-view-outside-'));
  await writeFile(path.join(outside, 'secret.jpg'), 'not for the browser');
  await mkdir(path.join(dir, 'b/images/cd'), { recursive: true });
  await symlink(path.join(outside, 'secret.jpg'), path.join(dir, `b${LINKED}`));
  await mkdir(path.join(dir, `b${FOLDER}`), { recursive: true });
  server = viewerServer(store, layout, new Map([['/viewer.html', { path: 'viewer.html', body: '<html>viewer</html>', contentType: 'text/html' }]]), '127.0.0.1');
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as { port: number }).port;
});

after(async () => {
  server?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
  if (outside) await rm(outside, { recursive: true, force: true });
});

function get(pathname: string, host: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path: pathname, headers: { host } }, (res) => {
      let body = '';
      res.on('data', (d: Buffer) => (body += d.toString()));
      res.on('end', () => resolve({ status: res.statusCode!, body }));
    });
    req.on('error', reject).end();
  });
}

test('the page and images answer for 127.0.0.1:<port> and localhost:<port>', async () => {
  assert.deepEqual(await get('/', `127.0.0.1:${port}`), { status: 200, body: '<html>viewer</html>' });
  assert.deepEqual(await get('/', `localhost:${port}`), { status: 200, body: '<html>viewer</html>' });
  assert.deepEqual(await get(IMAGE, `localhost:${port}`), { status: 200, body: 'jpeg bytes' });
});

test('another Host is refused with 403, page and images alike', async () => {
  for (const host of [`evil.example:${port}`, 'evil.example', `127.0.0.1:${port + 1}`, `127.0.0.1.evil.example:${port}`]) {
    const page = await get('/', host);
    assert.equal(page.status, 403, host);
    assert.equal(page.body, `mmif view serves 127.0.0.1:${port} only\n`);
    assert.equal((await get(IMAGE, host)).status, 403, host);
  }
});

test('with --host, only that host:port is served', () => {
  assert.equal(hostAllowed('viewer.lan:8080', 'viewer.lan', 8080), true);
  assert.equal(hostAllowed('localhost:8080', 'viewer.lan', 8080), false);
  assert.equal(hostAllowed(undefined, '127.0.0.1', 8080), false);
  assert.equal(hostAllowed('LOCALHOST:8080', '127.0.0.1', 8080), true);
});

test('an image that links outside the dataset gets a 403, and no answer names a path outside the dataset', async () => {
  const linked = await get(LINKED, `127.0.0.1:${port}`);
  assert.equal(linked.status, 403);
  assert.equal(linked.body, `${LINKED} leads outside the dataset; not served\n`);
  const unreadable = await get(FOLDER, `127.0.0.1:${port}`);
  assert.equal(unreadable.status, 500);
  for (const body of [linked.body, unreadable.body]) {
    assert.doesNotMatch(body, new RegExp(`${dir}|${outside}|secret|${tmpdir()}`));
  }
});
