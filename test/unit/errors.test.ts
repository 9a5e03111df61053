/**
 * The error taxonomy (domain/errors.ts): every error class the engine defines derives from MmifError,
 * and the one place activity failures leave the worker (worker/maskSecretsInterceptor.ts) makes the
 * permanent ones non-retryable, whichever activity threw them.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ApplicationFailure } from '@temporalio/common';
import { ConfigError } from '../../config/configError.js';
import { InputError, isPermanent, MmifError, PermanentError } from '../../domain/errors.js';
import { EXIT } from '../../cli/exitCodes.js';
import { exitCodeFor } from '../../cli/failures.js';
import { SampleRejection } from '../../domain/rejection.js';
import { BudgetExhausted } from '../../llm/buildBudget.js';
import { EndpointError } from '../../llm/endpointError.js';
import { EndpointTimeout } from '../../llm/sendCompletion.js';
import { SourceError } from '../../sources/contract.js';
import { StoreError } from '../../storage/objectStore.js';
import { maskedFailure } from '../../worker/maskSecretsInterceptor.js';
import { PRODUCT_FOLDERS } from '../harness/productFolders.js';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
/** Folders of the product, but the CLI, whose CliError carries an exit code, not a failure (tooling folders define errors of their own: the simulator's HTTP errors). */
const PRODUCT = PRODUCT_FOLDERS.filter((folder) => folder !== 'cli');

/** Every `class X extends Y` of the product: X's parent name and the module that defines X. */
async function errorClasses(): Promise<Map<string, { parent: string; file: string }>> {
  const classes = new Map<string, { parent: string; file: string }>();
  for (const folder of PRODUCT) {
    for (const entry of await readdir(path.join(REPO, folder), { withFileTypes: true, recursive: true })) {
      if (!entry.isFile() || !entry.name.endsWith('.ts')) continue;
      const file = path.join(entry.parentPath, entry.name);
      for (const [, name, parent] of (await readFile(file, 'utf8')).matchAll(/class (\w+) extends (\w+)\b/g)) classes.set(name!, { parent: parent!, file });
    }
  }
  return classes;
}

/** Whether the class `name` derives, through any number of levels, from `ancestor`. */
function derives(classes: Map<string, { parent: string }>, name: string, ancestor: string): boolean {
  for (let c = classes.get(name)?.parent; c !== undefined; c = classes.get(c)?.parent) if (c === ancestor) return true;
  return false;
}

test('every error class of the product derives from the taxonomy, not from Error directly', async () => {
  const direct = [...(await errorClasses())].filter(([, c]) => c.parent === 'Error').map(([name, c]) => `${path.relative(REPO, c.file)}: ${name}`);
  assert.deepEqual(direct, ['domain/errors.ts: MmifError']);
});

/**
 * Every permanent error class and what it is: `input` when the user fixes it in the config, the data
 * or the environment (exit 2), `permanent` when no retry and no fix of theirs changes it (exit 1).
 * A new permanent class fails the test until it is classified here, on purpose.
 */
const PERMANENT_CLASSES: Record<string, 'input' | 'permanent'> = {
  BudgetExhausted: 'permanent',
  ColumnMappingError: 'input',
  ConfigError: 'input',
  ConfigMismatchError: 'input',
  DecontaminationSetError: 'input',
  EndpointError: 'input',
  ErrorBudgetExceeded: 'permanent',
  EvalInputError: 'input',
  ImportedScoresError: 'input',
  MissingComparisonError: 'permanent',
  MultiturnExportError: 'permanent',
  NoCommittedShardError: 'permanent',
  NoReservedSplitError: 'permanent',
  OutputLocationError: 'input',
  ReservedSplitError: 'permanent',
  RichnessError: 'input',
  SourceError: 'input',
};

test('every permanent error class, found in the source, is classified, fails its activity non-retryably, and the CLI exits 2 exactly for the input errors among them', async () => {
  const classes = await errorClasses();
  const permanent = [...classes.keys()].filter((name) => derives(classes, name, 'PermanentError'));
  assert.deepEqual(permanent.filter((name) => name !== 'InputError').sort(), Object.keys(PERMANENT_CLASSES).sort(), 'PERMANENT_CLASSES lists every permanent class');
  for (const name of permanent) {
    const module = (await import(classes.get(name)!.file)) as Record<string, new (...args: never[]) => Error>;
    const cls = module[name];
    assert.ok(cls?.prototype instanceof PermanentError, `${name} is exported and a PermanentError`);
    // An instance without its constructor's arguments: what counts is the class, as for the worker.
    const err = Object.assign(Object.create(cls.prototype) as Error, { message: `${name} happened` });
    assert.ok(isPermanent(err), name);
    const failure = maskedFailure(err);
    assert.ok(failure instanceof ApplicationFailure && failure.nonRetryable, `${name} fails its activity non-retryably`);
    assert.equal(failure.type, name);
    const input = derives(classes, name, 'InputError');
    if (name !== 'InputError') assert.equal(input, PERMANENT_CLASSES[name] === 'input', `${name} is ${PERMANENT_CLASSES[name] === 'input' ? 'an InputError' : 'no InputError'}`);
    assert.equal(cls.prototype instanceof InputError, input);
    assert.equal(exitCodeFor({ type: failure.type, message: failure.message }), input ? EXIT.usage : EXIT.failed, `${name}: cli/inputErrors.ts lists every InputError class`);
  }
});

test('permanent errors fail their activity non-retryably under their own type; transient and record errors are retried', () => {
  const endpoint = { baseURL: 'http://127.0.0.1:1/v1', model: 'm', apiKey: 'k', replicas: [{ baseURL: 'http://127.0.0.1:1/v1', concurrency: 1 }] };
  const cases: Array<[Error, boolean]> = [
    [new ConfigError('invalid build config: maxSamples: too small'), true],
    [new SourceError('/data', 'no such root'), true],
    [new EndpointError('model endpoint refused the key', { endpoint: endpoint.baseURL, model: 'm', status: 401, excerpt: '' }), true],
    [new BudgetExhausted('budget exhausted: $1.0000 of $1.0000 spent'), true],
    [new EndpointTimeout('answer', endpoint, 1000, 3), false],
    [new StoreError('store unreachable', 'k', 'io'), false],
    [new SampleRejection('answer: below-threshold'), false],
    [new Error('a bug'), false],
  ];
  for (const [err, permanent] of cases) {
    assert.equal(isPermanent(err), permanent, err.name);
    const failure = maskedFailure(err);
    assert.ok(failure instanceof ApplicationFailure, err.name);
    assert.equal(failure.type, err.constructor.name);
    assert.equal(failure.nonRetryable, permanent, `${err.name} non-retryable`);
    assert.equal(failure.message, err.message);
  }
  assert.ok(new ConfigError('x') instanceof MmifError);
});
