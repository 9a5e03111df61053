/**
 * The unit tier's rule, enforced: `npm run test:unit` preloads this module (`--import`), and from then
 * on starting a child process, listening on a socket or loading Temporal's test server package throws
 * an error naming the rule. Tests that need any of those belong in test/integration/ (docs/architecture.md,
 * "Tests"), so the unit tier stays fast and runs from a fresh clone with nothing installed but node_modules.
 * The runner's own process is left alone: node:test starts one child process per test file
 * (NODE_TEST_CONTEXT is set in those children), and the guard applies inside them.
 */
import childProcess from 'node:child_process';
import dgram from 'node:dgram';
import { register, syncBuiltinESMExports } from 'node:module';
import net from 'node:net';
import { promisify } from 'node:util';

/** The words every refusal starts with. */
const UNIT_RULE = 'test/unit starts no server and no process';

function refusal(what: string): Error {
  return new Error(`${UNIT_RULE}: ${what}. Move this test to test/integration/ (docs/architecture.md, "Tests").`);
}

const isRunnerProcess = process.execArgv.includes('--test') && process.env.NODE_TEST_CONTEXT === undefined;

if (!isRunnerProcess) {
  for (const name of ['spawn', 'spawnSync', 'exec', 'execSync', 'execFile', 'execFileSync', 'fork'] as const) {
    const refuse = (command: unknown) => {
      throw refusal(`child_process.${name}(${JSON.stringify(String(command))}) was called`);
    };
    Object.defineProperty(refuse, promisify.custom, { value: refuse, configurable: true });
    (childProcess as unknown as Record<string, unknown>)[name] = refuse;
  }
  net.Server.prototype.listen = function listen(): never {
    throw refusal('a server called listen()');
  };
  dgram.Socket.prototype.bind = function bind(): never {
    throw refusal('a UDP socket called bind()');
  };
  // `import { spawn } from 'node:child_process'` reads the patched functions from here on.
  syncBuiltinESMExports();
  // Temporal's time-skipping and dev servers are started by the SDK's native core, out of child_process's
  // reach: the package that starts them does not load.
  const hooks = `export async function resolve(specifier, context, next) {
    if (specifier === '@temporalio/testing' || specifier.startsWith('@temporalio/testing/')) throw new Error(${JSON.stringify(`${UNIT_RULE}: @temporalio/testing starts a Temporal server. Move this test to test/integration/ (docs/architecture.md, "Tests").`)});
    return next(specifier, context);
  }`;
  register(`data:text/javascript,${encodeURIComponent(hooks)}`);
}
