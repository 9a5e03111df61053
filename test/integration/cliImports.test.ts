/**
 * The commands an e2e test or a user runs dozens of times (status, resume, cancel) are Temporal
 * clients: they must not load the image, Parquet or model-call packages the worker uses, which cost
 * most of a call's CPU (ADR 0058), nor the S3 client unless a store they open is on S3 (ADR 0070).
 * A loader hook (Node's module.register) lists every package the command resolves; a bad flag makes
 * the command stop right after its modules loaded.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { closedPort } from '../harness/closedPort.js';

const CLI = fileURLToPath(new URL('../../cli/mmif.ts', import.meta.url));
const S3 = ['@aws-sdk/client-s3', '@aws-sdk/lib-storage'];
const HEAVY = ['sharp', '@dsnp/parquetjs', 'hyparquet', 'openai', ...S3];

/** Writes "RESOLVED <package>" to stderr for each node_modules package a module resolves. */
const LISTING_HOOK = `data:text/javascript,${encodeURIComponent(`
import { register } from 'node:module';
register('data:text/javascript,' + encodeURIComponent(\`
export async function resolve(specifier, context, next) {
  const resolved = await next(specifier, context);
  const pkg = /node_modules\\\\/((@[^/]+\\\\/)?[^/]+)/.exec(resolved.url);
  if (pkg) process.stderr.write('RESOLVED ' + pkg[1] + '\\\\n');
  return resolved;
}\`));
`)}`;

function packagesLoadedBy(args: string[], env: NodeJS.ProcessEnv = process.env): Promise<{ code: number; packages: Set<string>; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, ['--import', 'tsx', '--import', LISTING_HOOK, CLI, ...args], { env }, (err, _stdout, stderr) => {
      const packages = new Set([...stderr.matchAll(/^RESOLVED (\S+)$/gm)].map((m) => m[1]!));
      resolve({ code: err ? Number(err.code ?? 1) : 0, packages, stderr });
    });
  });
}

for (const command of ['status', 'resume', 'cancel']) {
  test(`mmif ${command} loads none of ${HEAVY.join(', ')}`, async () => {
    const { code, packages, stderr } = await packagesLoadedBy([command, '--no-such-flag']);
    assert.equal(code, 2, stderr);
    assert.ok(packages.has('@temporalio/client'), `the hook lists packages: ${[...packages].join(', ')}`);
    assert.deepEqual(
      HEAVY.filter((p) => packages.has(p)),
      [],
      `mmif ${command} loaded them`,
    );
  });
}

test('a command reading a local output loads no S3 package; the same command on an s3:// output loads the client when it opens the store', async () => {
  const dir = await mkdtemp(path.join(tmpdir(), 'mmif-cli-imports-'));
  try {
    const local = await packagesLoadedBy(['inspect', '--output', dir, '--build-id', 'absent']);
    assert.match(local.stderr, /no build 'absent' in /, 'the command read its store');
    assert.deepEqual(
      S3.filter((p) => local.packages.has(p)),
      [],
      'a local output loaded the S3 client',
    );
    // No credentials and a closed port: the store's first request fails at once, after the client loaded.
    const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('AWS_')));
    const s3 = await packagesLoadedBy(['inspect', '--output', 's3://bucket/out', '--build-id', 'absent'], { ...env, MMIF_S3_ENDPOINT: `http://127.0.0.1:${await closedPort()}` });
    assert.match(s3.stderr, /object store http:\/\/127\.0\.0\.1:\d+ \(s3:\/\/bucket\/out\): reading /, s3.stderr);
    assert.ok(s3.packages.has('@aws-sdk/client-s3'), `an s3:// output loads the client: ${[...s3.packages].join(', ')}`);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
