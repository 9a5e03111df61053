import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { maskSecrets } from '../../config/secrets.js';
import { temporalSettingsFromEnv } from '../../worker/connectionFromEnv.js';

test('defaults to a local dev server without TLS', () => {
  const s = temporalSettingsFromEnv({});
  assert.deepEqual(s.connection, { address: 'localhost:7233', tls: undefined, apiKey: undefined });
  assert.equal(s.namespace, 'default');
  assert.equal(s.taskQueue, 'mmif');
});

test('Temporal Cloud with an API key turns TLS on', () => {
  const s = temporalSettingsFromEnv({
    TEMPORAL_ADDRESS: 'ns.acct.tmprl.cloud:7233',
    TEMPORAL_NAMESPACE: 'ns.acct',
    TEMPORAL_API_KEY: 'secret-key',
    MMIF_TASK_QUEUE: 'gpu-queue',
  });
  assert.equal(s.connection.address, 'ns.acct.tmprl.cloud:7233');
  assert.equal(s.connection.apiKey, 'secret-key');
  assert.ok(s.connection.tls);
  assert.equal(s.namespace, 'ns.acct');
  assert.equal(s.taskQueue, 'gpu-queue');
});

test('mTLS reads the certificate files; half a pair is an error; TEMPORAL_TLS=false wins', async () => {
  const dir = await mkdtemp(path.join(tmpdir(), 'mmif-tls-'));
  try {
    await writeFile(path.join(dir, 'c.pem'), 'CERT');
    await writeFile(path.join(dir, 'k.pem'), 'KEY');
    const s = temporalSettingsFromEnv({
      TEMPORAL_TLS_CLIENT_CERT_PATH: path.join(dir, 'c.pem'),
      TEMPORAL_TLS_CLIENT_KEY_PATH: path.join(dir, 'k.pem'),
      TEMPORAL_TLS_SERVER_NAME: 'srv',
    });
    const tls = s.connection.tls as { clientCertPair: { crt: Buffer; key: Buffer }; serverNameOverride: string };
    assert.equal(tls.clientCertPair.crt.toString(), 'CERT');
    assert.equal(tls.clientCertPair.key.toString(), 'KEY');
    assert.equal(tls.serverNameOverride, 'srv');
    assert.throws(() => temporalSettingsFromEnv({ TEMPORAL_TLS_CLIENT_CERT_PATH: path.join(dir, 'c.pem') }), /must be set together/);
    assert.equal(temporalSettingsFromEnv({ TEMPORAL_API_KEY: 'k', TEMPORAL_TLS: 'false' }).connection.tls, false);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test("a profile of temporal.toml, as Temporal's CLI reads it: TEMPORAL_PROFILE picks it, TEMPORAL_* override it, a missing one is named", async () => {
  const dir = await mkdtemp(path.join(tmpdir(), 'mmif-profile-'));
  try {
    const file = path.join(dir, 'temporal.toml');
    await writeFile(
      file,
      [
        '[profile.default]',
        'address = "localhost:7233"',
        '',
        '[profile.cloud]',
        'address = "ns.acct.tmprl.cloud:7233"',
        'namespace = "ns.acct"',
        'api_key = "profile-key"',
        '',
      ].join('\n'),
    );
    const cloud = temporalSettingsFromEnv({ TEMPORAL_CONFIG_FILE: file, TEMPORAL_PROFILE: 'cloud' });
    assert.equal(cloud.connection.address, 'ns.acct.tmprl.cloud:7233');
    assert.equal(cloud.namespace, 'ns.acct');
    assert.equal(cloud.connection.apiKey, 'profile-key');
    assert.ok(cloud.connection.tls, 'an API key turns TLS on');
    assert.equal(cloud.profile, `profile 'cloud' of ${file}`);
    const overridden = temporalSettingsFromEnv({ TEMPORAL_CONFIG_FILE: file, TEMPORAL_PROFILE: 'cloud', TEMPORAL_NAMESPACE: 'other' });
    assert.equal(overridden.namespace, 'other');
    assert.equal(temporalSettingsFromEnv({ TEMPORAL_CONFIG_FILE: file }).connection.address, 'localhost:7233');
    assert.throws(
      () => temporalSettingsFromEnv({ TEMPORAL_CONFIG_FILE: file, TEMPORAL_PROFILE: 'prod' }),
      /^Error: Temporal profile 'prod' of .*temporal.toml: Profile 'prod' not found/,
    );
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('gRPC metadata from TEMPORAL_GRPC_META_* is sent, its values masked as secrets by the name alone, before any settings are read', () => {
  const env = { TEMPORAL_GRPC_META_AUTHORIZATION: 'Bearer grpc-meta-canary-5d1f' };
  assert.equal(maskSecrets('sent Bearer grpc-meta-canary-5d1f', env), 'sent [secret TEMPORAL_GRPC_META_AUTHORIZATION]');
  const s = temporalSettingsFromEnv(env);
  assert.deepEqual(s.connection.metadata, { authorization: 'Bearer grpc-meta-canary-5d1f' });
  assert.equal(maskSecrets('sent Bearer grpc-meta-canary-5d1f', env), 'sent [secret TEMPORAL_GRPC_META_AUTHORIZATION]');
});

test("a profile's grpc_meta and api_key, which no variable holds, are masked once the profile is read", async () => {
  const dir = await mkdtemp(path.join(tmpdir(), 'mmif-profile-'));
  try {
    const file = path.join(dir, 'temporal.toml');
    const toml = [
      '[profile.default]',
      'address = "localhost:7233"',
      'api_key = "cloudkey-canary-77a1"',
      '[profile.default.grpc_meta]',
      'x-tenant-token = "tenant-canary-9c3e"',
      '',
    ];
    await writeFile(file, toml.join('\n'));
    const env = { TEMPORAL_CONFIG_FILE: file };
    const line = 'echoed cloudkey-canary-77a1 and tenant-canary-9c3e';
    assert.equal(maskSecrets(line, env), line, 'nothing known before the profile is read');
    assert.deepEqual(temporalSettingsFromEnv(env).connection.metadata, { 'x-tenant-token': 'tenant-canary-9c3e' });
    assert.equal(maskSecrets(line, env), 'echoed [secret Temporal api_key] and [secret Temporal grpc_meta x-tenant-token]');
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
