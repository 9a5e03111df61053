/**
 * Parquet keeps an assembled record's nested fields under the record's own names, as pyarrow reads
 * them, and its image column decodes in every `datasets` release the trainers use (tools/datasets-*).
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import sharp from 'sharp';
import { assembleSample } from '../../output/commit/records.js';
import { dpoParquet, instructParquet } from '../../output/formats/parquet.js';
import { sample, states } from '../fixtures/recordStates.js';
import { readParquetWithPython } from '../harness/pythonReader.js';
import { DATASETS_VENVS } from '../harness/trainerReaders.js';

test("Parquet stores nested constraints and verdicts under the record's field names, and its image decodes in datasets 2.16 to the newest", async () => {
  const { instruct, dpo } = assembleSample(sample, states(), { template: 'inline', seed: 0 });
  const jpeg = await sharp({ create: { width: 4, height: 3, channels: 3, background: 'gray' } })
    .jpeg()
    .toBuffer();
  const dir = await mkdtemp(path.join(tmpdir(), 'mmif-records-'));
  try {
    const files = [path.join(dir, 'instruct.parquet'), path.join(dir, 'dpo.parquet')];
    await writeFile(files[0]!, await instructParquet([instruct!], () => jpeg));
    await writeFile(files[1]!, await dpoParquet([dpo!], () => jpeg));
    const [sft, pair] = await readParquetWithPython(files, path.join(dir, 'hf-cache'));
    // Parquet has no "absent": an optional field the record leaves out reads as null.
    const withNulls = <T extends object>(rows: readonly T[], keys: string[]) => rows.map((r) => ({ ...Object.fromEntries(keys.map((k) => [k, null])), ...r }));
    for (const [file, record] of [
      [sft!, instruct!],
      [pair!, dpo!],
    ] as const) {
      assert.deepEqual(file.rows[0]!.constraints, withNulls(record.constraints, ['selectionNote']));
      assert.deepEqual(
        file.rows[0]!.verdicts,
        withNulls(record.verdicts, ['judgeModel', 'calls', 'judgeAudit', 'vacuous', 'reusedFrom', 'without']).map((v) => ({ ...v, calls: v.calls ?? [] })),
      );
    }
    assert.equal(sft!.rows[0]!.constraints[1]!.selectionNote, 'model choice refused: no such function');
    // Every datasets release the trainers use decodes the image column without a cast.
    for (const venv of DATASETS_VENVS) {
      for (const file of await readParquetWithPython(files, path.join(dir, `hf-${venv.label}`), venv.python)) {
        assert.equal(file.hf_features.image, 'Image', `${venv.label}: ${file.path}`);
        assert.deepEqual(file.rows[0]!.decoded_image, { mode: 'RGB', size: [4, 3] }, venv.label);
      }
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
