/**
 * The installed `mmif` command: npm link and global installs put a symlink to bin/mmif.js on the
 * PATH; it must run the TypeScript CLI from any directory, with its exit codes.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const LAUNCHER = fileURLToPath(new URL('../../bin/mmif.js', import.meta.url));

function run(bin: string, args: string[], cwd: string, env: NodeJS.ProcessEnv): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(bin, args, { cwd, env }, (err, stdout, stderr) => resolve({ code: err ? Number(err.code ?? 1) : 0, stdout, stderr }));
  });
}

test('a symlinked bin/mmif.js on the PATH runs the CLI from another directory, keeping its exit codes', async () => {
  const dir = await mkdtemp(path.join(tmpdir(), 'mmif-bin-'));
  try {
    await symlink(LAUNCHER, path.join(dir, 'mmif'));
    const env = { ...process.env, PATH: `${dir}${path.delimiter}${process.env.PATH}` };
    const help = await run('mmif', ['--help'], dir, env);
    assert.equal(help.code, 0, help.stderr);
    assert.match(help.stdout, /^usage: mmif <command>/);
    const unknown = await run('mmif', ['no-such-command'], dir, env);
    assert.equal(unknown.code, 2, unknown.stdout + unknown.stderr);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
