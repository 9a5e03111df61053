/**
 * `mmif status --evals` on a real Temporal dev server: an evaluation that did not finish shows its
 * cause on its line (as `build --wait` shows a failed build's), not a bare status. No worker runs:
 * one evaluation is terminated with a reason, the other stays running; a FAILED one's cause is read
 * the same way (cli/failures.ts rootFailure of the run's result).
 * Completed evaluations, with their figures, are in evalOnTemporal.test.ts.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { Client, Connection } from '@temporalio/client';
import { startTemporalDevServer, type DevServer } from '../../local/temporalDevServer.js';
import { runMmif } from '../harness/mmifCli.js';

let server: DevServer;
let client: Client;

before(async () => {
  server = await startTemporalDevServer();
  client = new Client({ connection: await Connection.connect({ address: server.address }) });
});
after(async () => {
  await client?.connection.close();
  await server?.stop();
});

test('status --evals: a closed evaluation that did not finish shows why; a running one its status only', async () => {
  const ended = await client.workflow.start('evaluateModel', { taskQueue: 'no-worker', workflowId: 'eval-stopped', args: [{}] });
  await ended.terminate('endpoint gone: stopped by hand');
  await client.workflow.start('evaluateModel', { taskQueue: 'no-worker', workflowId: 'eval-waiting', args: [{}] });
  const listed = await runMmif(['status', '--evals'], { env: { TEMPORAL_ADDRESS: server.address, TEMPORAL_NAMESPACE: 'default' } });
  assert.equal(listed.code, 0, listed.stderr);
  const line = (id: string) => listed.stdout.split('\n').find((l) => l.startsWith(`eval ${id} `));
  assert.match(line('stopped') ?? '', /^eval stopped {2}TERMINATED {2}started \S+ {2}cause: endpoint gone: stopped by hand$/);
  assert.match(line('waiting') ?? '', /^eval waiting {2}RUNNING {2}started \S+$/);
  const json = JSON.parse((await runMmif(['status', '--evals', '--json'], { env: { TEMPORAL_ADDRESS: server.address } })).stdout) as Array<{ evalId: string; cause?: string }>;
  assert.equal(json.find((r) => r.evalId === 'stopped')?.cause, 'endpoint gone: stopped by hand');
});
