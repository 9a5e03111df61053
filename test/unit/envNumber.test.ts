/** The one parser of numbers from environment variables (config/envNumber.ts): absent, good, and refused naming the variable. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigError } from '../../config/configError.js';
import { positiveEnvNumber } from '../../config/envNumber.js';
import { gpuFleetFromEnv } from '../../simulator/gpuProfile.js';
import { simulatorOptionsFromEnv } from '../../simulator/server.js';

test('a positive number is read; unset or blank is undefined; anything else is a ConfigError naming the variable and value', () => {
  assert.equal(positiveEnvNumber('N', {}), undefined);
  assert.equal(positiveEnvNumber('N', { N: '  ' }), undefined);
  assert.equal(positiveEnvNumber('N', { N: ' 2.5 ' }), 2.5);
  for (const bad of ['0', '-1', 'soon', 'Infinity', '1e999']) {
    assert.throws(
      () => positiveEnvNumber('N', { N: bad }, 'milliseconds'),
      (err: unknown) => err instanceof ConfigError && err.message === `Invalid environment variable N=${JSON.stringify(bad)}: expected a positive number of milliseconds`,
    );
  }
  assert.throws(
    () => gpuFleetFromEnv({ SIM_GPU_PROFILE: 'qwen2.5-vl-7b', SIM_GPUS: 'two' }),
    /^ConfigError: Invalid environment variable SIM_GPUS="two": expected a whole number of GPUs$/,
  );
  assert.throws(
    () => simulatorOptionsFromEnv({ SIM_PORT: '80.5' }),
    (err: unknown) => err instanceof ConfigError && /^Invalid environment variable SIM_PORT="80.5": .+/.test(err.message),
    'the simulator reads its numbers with the same reader, refused the same way',
  );
});
