/**
 * The commands an e2e test or a user runs dozens of times (status, resume, cancel) are Temporal
 * clients: they must not load the image, Parquet or model-call packages the worker uses, which cost
 * most of a call's CPU (ADR 0058). A loader hook (Node's module.register) lists every package the
 * command resolves; a bad flag makes the command stop right after its modules loaded.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const CLI = fileURLToPath(new URL('../../cli/mmif.ts', import.meta.url));
const HEAVY = ['sharp', '@dsnp/parquetjs', 'hyparquet', 'openai'];

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

function packagesLoadedBy(command: string): Promise<{ code: number; packages: Set<string>; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, ['--import', 'tsx', '--import', LISTING_HOOK, CLI, command, '--no-such-flag'], (err, _stdout, stderr) => {
      const packages = new Set([...stderr.matchAll(/^RESOLVED (\S+)$/gm)].map((m) => m[1]!));
      resolve({ code: err ? Number(err.code ?? 1) : 0, packages, stderr });
    });
  });
}

for (const command of ['status', 'resume', 'cancel']) {
  test(`mmif ${command} loads none of ${HEAVY.join(', ')}`, async () => {
    const { code, packages, stderr } = await packagesLoadedBy(command);
    assert.equal(code, 2, stderr);
    assert.ok(packages.has('@temporalio/client'), `the hook lists packages: ${[...packages].join(', ')}`);
    assert.deepEqual(
      HEAVY.filter((p) => packages.has(p)),
      [],
      `mmif ${command} loaded them`,
    );
  });
}
