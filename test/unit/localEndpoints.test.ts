/** `--local` starts the simulator only for the model roles that would call it: those with no baseUrl of their own. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { endpointLine, rolesOnEnvBaseUrl } from '../../cli/localTemporal.js';
import type { BuildConfig } from '../../config/buildConfig.js';

const models = (m: Record<string, { model: string; baseUrl?: string }>) => ({ models: m }) as unknown as Pick<BuildConfig, 'models'>;

test('every role on its own baseUrl: no simulator, and the line says so', () => {
  const own = models({ default: { model: 'm', baseUrl: 'http://gpu:8000/v1' } });
  assert.deepEqual(rolesOnEnvBaseUrl(own), []);
  assert.equal(endpointLine(undefined, rolesOnEnvBaseUrl(own)), "model endpoints: each model role's own baseUrl from the config (no simulator)");
});

test('some roles without a baseUrl: the simulator answers those, named', () => {
  const mixed = models({ default: { model: 'm', baseUrl: 'http://gpu:8000/v1' }, judge: { model: 'j' } });
  assert.deepEqual(rolesOnEnvBaseUrl(mixed), ['judge']);
  assert.equal(endpointLine('http://127.0.0.1:18431/v1', ['judge']), 'simulator: http://127.0.0.1:18431/v1 (answers of judge will be SIMULATED)');
  const none = models({ default: { model: 'm' } });
  assert.equal(endpointLine('http://127.0.0.1:18431/v1', rolesOnEnvBaseUrl(none)), 'simulator: http://127.0.0.1:18431/v1 (answers will be SIMULATED)');
  assert.equal(endpointLine(undefined, rolesOnEnvBaseUrl(none), 'http://vllm:8000/v1'), 'model endpoint: http://vllm:8000/v1');
});
