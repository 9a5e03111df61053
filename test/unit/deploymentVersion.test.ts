import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { currencyLine, workerDeploymentVersion } from '../../worker/deploymentVersion.js';

const bundle = { code: 'workflow code', sourceMap: '' };
const hashed = createHash('sha256').update(bundle.code).digest('hex').slice(0, 16);

test("a worker's version: MMIF_DEPLOYMENT and MMIF_BUILD_ID, else the Worker Controller's names, else 'mmif' and the hash of the bundle it loads", async () => {
  assert.deepEqual(await workerDeploymentVersion(bundle, {}), { deploymentName: 'mmif', buildId: hashed });
  assert.notEqual((await workerDeploymentVersion({ ...bundle, code: 'other code' }, {})).buildId, hashed, 'other workflow code, another version');
  assert.deepEqual(await workerDeploymentVersion(bundle, { TEMPORAL_DEPLOYMENT_NAME: 'k8s', TEMPORAL_WORKER_BUILD_ID: 'pod-hash' }), {
    deploymentName: 'k8s',
    buildId: 'pod-hash',
  });
  assert.deepEqual(await workerDeploymentVersion(bundle, { MMIF_DEPLOYMENT: 'gpu', MMIF_BUILD_ID: 'v7', TEMPORAL_DEPLOYMENT_NAME: 'k8s', TEMPORAL_WORKER_BUILD_ID: 'pod-hash' }), {
    deploymentName: 'gpu',
    buildId: 'v7',
  });
});

test('the worker says whether its version is current, and the command that makes it current when it is not', () => {
  const version = { deploymentName: 'mmif', buildId: 'b2' };
  assert.equal(currencyLine(version, { made: true }), 'worker version mmif.b2 is now current (the deployment had none): new builds run on it');
  assert.equal(currencyLine(version, { made: false, current: version }), 'worker version mmif.b2 is current');
  assert.equal(
    currencyLine(version, { made: false, current: { deploymentName: 'mmif', buildId: 'b1' } }),
    'worker version mmif.b2 is not current: new builds start on mmif.b1 until `temporal worker deployment set-current-version --deployment-name mmif --build-id b2`',
  );
  assert.equal(
    currencyLine(version, { made: false, manager: 'temporal-worker-controller' }),
    'worker version mmif.b2: temporal-worker-controller manages which version is current',
  );
});
