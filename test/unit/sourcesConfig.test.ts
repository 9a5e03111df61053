import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseBuildConfig } from '../../config/buildConfig.js';
import { imageSchema } from '../../config/imageConfig.js';
import { ConfigError } from '../../config/configError.js';
import { sourceDefaults, sourceImageConfig, sourceSchema, type SourceConfigOf } from '../../config/sourceConfig.js';
import { SOURCE_TYPES } from '../../sources/registry.js';
import { CONSTRAINT_KEYS } from '../../domain/constraints/catalogue.js';

const build = (sources: unknown[]) => parseBuildConfig({ buildId: 'b', output: '/tmp/out', sources, maxSamples: 10, models: { default: { model: 'm' } } });

function configError(sources: unknown[]): string {
  try {
    build(sources);
  } catch (err) {
    assert.ok(err instanceof ConfigError);
    return err.message;
  }
  assert.fail('expected the config to be refused');
}

describe('source config', () => {
  it('writes a CC3M config out with its defaults', () => {
    assert.deepEqual(sourceSchema.parse({ type: 'cc3m', uri: '/data/cc3m' }), {
      type: 'cc3m',
      uri: '/data/cc3m',
      layout: 'auto',
      dedupe: 'image',
      licenseNote: 'CC3M: images owned by their original publishers; captions CC BY 4.0 (Google)',
    });
  });

  it('gives every type its licence note, overridable', () => {
    const notes = Object.fromEntries(SOURCE_TYPES.map((type) => [type, sourceDefaults(type).licenseNote]));
    assert.match(notes.chartqa!, /GPL-3\.0/);
    assert.match(notes.geo170k!, /not declared/);
    assert.match(notes.allava!, /third parties/);
    assert.match(notes.rico!, /CC BY 4\.0/);
    assert.match(notes.multiui!, /see dataset card/);
    assert.equal(sourceSchema.parse({ type: 'rico', uri: '/r', licenseNote: 'mine' }).licenseNote, 'mine');
  });

  it('fills the per-type defaults', () => {
    const chartqa = sourceSchema.parse({ type: 'chartqa', uri: '/c' }) as SourceConfigOf<'chartqa'>;
    assert.deepEqual([chartqa.splits, chartqa.sets, chartqa.attachTables], [['train'], ['human', 'augmented'], true]);
    assert.deepEqual(chartqa.question, { minLength: 8, maxLength: 500, dropMultipleChoice: true, dropFewShot: true });

    const geo = sourceSchema.parse({ type: 'geo170k', uri: '/g' }) as SourceConfigOf<'geo170k'>;
    assert.deepEqual(geo.files, ['qa_tuning.json']);
    assert.equal(geo.question.dropMultipleChoice, false);

    const allava = sourceSchema.parse({ type: 'allava', uri: '/a' }) as SourceConfigOf<'allava'>;
    assert.equal(allava.files, undefined, 'absent: the ALLaVA-4V files present at the root');

    const multiui = sourceSchema.parse({ type: 'multiui', uri: '/m' }) as SourceConfigOf<'multiui'>;
    assert.deepEqual(multiui.keepTasks, ['webqa', 'embed_qa', 'meta_generate']);
    assert.deepEqual(multiui.files, ['stage1_data.json', 'stage2_data_to_be_combined_with_general_data.json'], 'the files neulab/MultiUI ships');
    assert.match(configError([{ type: 'multiui', uri: '/m', files: [] }]), /sources\.0\.files/);
  });

  it("writes the type's image defaults into the config, under the source's own overrides", () => {
    const geo = sourceSchema.parse({ type: 'geo170k', uri: '/g', image: { maxLongSide: 512, minShortSide: 100 } });
    assert.deepEqual(geo.image, { minShortSide: 100, maxAspectRatio: 6, minChannelStdDev: 2, maxLongSide: 512 });
    const buildImage = imageSchema.parse({ jpegQuality: 80 });
    assert.deepEqual(sourceImageConfig(buildImage, geo), { ...buildImage, minShortSide: 100, maxAspectRatio: 6, minChannelStdDev: 2, maxLongSide: 512 });

    const cc3m = sourceSchema.parse({ type: 'cc3m', uri: '/c' });
    assert.deepEqual(sourceImageConfig(buildImage, cc3m), buildImage, "no overrides: the build's settings");
    assert.match(configError([{ type: 'geo170k', uri: '/g', image: { minShortSide: -1 } }]), /sources\.0\.image\.minShortSide/);
    assert.match(configError([{ type: 'geo170k', uri: '/g', image: { sharpen: true } }]), /sources\.0\.image/);
  });

  it('offers fitting constraint subsets, valid and large enough for constraints.max', () => {
    for (const type of SOURCE_TYPES) {
      const subset = sourceDefaults(type).constraintTypes;
      if (!subset) continue;
      assert.ok(subset.length >= 12, `${type}: ${subset.length} types`);
      for (const key of subset) assert.ok(CONSTRAINT_KEYS.includes(key), `${type}: ${key}`);
      assert.equal(new Set(subset).size, subset.length);
    }
    const geo = sourceDefaults('geo170k').constraintTypes!;
    assert.ok(geo.includes('precision') && !geo.includes('role_imitation') && !geo.includes('tone_requirement'));
    assert.deepEqual(sourceSchema.parse({ type: 'geo170k', uri: '/g' }).constraintTypes, [...geo]);
    assert.equal(sourceSchema.parse({ type: 'allava', uri: '/a' }).constraintTypes, undefined, 'natural images: the whole catalogue');
    assert.deepEqual(sourceSchema.parse({ type: 'rico', uri: '/r', constraintTypes: ['mention', 'precision'] }).constraintTypes, ['mention', 'precision']);
  });

  it('refuses unknown or repeated constraint types, naming them', () => {
    assert.match(
      configError([{ type: 'cc3m', uri: '/c', constraintTypes: ['mention', 'rhyme_scheme'] }]),
      /sources\.0\.constraintTypes\.1: unknown constraint type 'rhyme_scheme'/,
    );
    assert.match(configError([{ type: 'cc3m', uri: '/c', constraintTypes: ['mention', 'mention'] }]), /list each constraint type once/);
  });

  it('takes a quota or a weight, not both', () => {
    assert.equal(sourceSchema.parse({ type: 'rico', uri: '/r', quota: 500 }).quota, 500);
    assert.equal(sourceSchema.parse({ type: 'rico', uri: '/r', weight: 0.25 }).weight, 0.25);
    assert.match(configError([{ type: 'rico', uri: '/r', quota: 5, weight: 1 }]), /sources\.0\.weight: set either quota .* or weight .*, not both/);
    assert.match(configError([{ type: 'rico', uri: '/r', quota: 2.5 }]), /sources\.0\.quota/);
    assert.match(configError([{ type: 'rico', uri: '/r', weight: 0 }]), /sources\.0\.weight/);
  });

  it('refuses fields of another type, files outside the root and bad question limits', () => {
    assert.match(configError([{ type: 'multiui', uri: '/m', files: ['a.json'], layout: 'files' }]), /sources\.0\.layout: unknown field/);
    assert.match(configError([{ type: 'rico', uri: '/r', splits: ['train'] }]), /splits/);
    assert.match(configError([{ type: 'geo170k', uri: '/g', files: ['../etc/passwd'] }]), /sources\.0\.files\.0: must be a path relative to the dataset root/);
    assert.match(configError([{ type: 'geo170k', uri: '/g', files: ['/abs.json'] }]), /sources\.0\.files\.0/);
    assert.match(configError([{ type: 'allava', uri: '/a', question: { minLength: 50, maxLength: 10 } }]), /sources\.0\.question\.minLength: must not exceed/);
    assert.match(configError([{ type: 'chartqa', uri: '/c', splits: ['dev'] }]), /sources\.0\.splits\.0/);
  });

  it('parses its own output to the same config (stored configs re-validate unchanged)', () => {
    for (const input of [
      { type: 'cc3m', uri: '/c', layout: 'flat' },
      { type: 'geo170k', uri: '/g', image: { maxLongSide: 512 } },
      { type: 'chartqa', uri: '/c', splits: ['val'], weight: 2 },
      { type: 'multiui', uri: '/m', files: ['x.json'], constraintTypes: ['mention', 'precision'] },
    ]) {
      const once = sourceSchema.parse(input);
      assert.deepEqual(sourceSchema.parse(once), once);
    }
  });
});
