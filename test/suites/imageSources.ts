/**
 * The image sources (sources/: ALLaVA, ChartQA, Geo170K, MultiUI, Rico) read their layouts from a
 * store, and name the record and the cause of every bad input without losing the others. One suite,
 * run on each store by its tier.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { imageSchema } from '../../config/imageConfig.js';
import { sourceImageConfig, sourceSchema, type SourceConfig } from '../../config/sourceConfig.js';
import { sampleIdFor } from '../../domain/hashing.js';
import type { SourceSample } from '../../domain/sample.js';
import { normalizeImage } from '../../image/normalize.js';
import { StoreError, type ObjectStore } from '../../storage/objectStore.js';
import { openStore } from '../../storage/openStore.js';
import { openSource } from '../../sources/source.js';
import { SourceError, type SourceItem } from '../../sources/contract.js';
import { TABLE_LIMIT } from '../../sources/chartqa/reader.js';
import { ALLAVA_LAION_INSTRUCT, ALLAVA_VFLAN_INSTRUCT, writeAllava } from '../fixtures/allava.js';
import { collect, problemsOf, samplesOf, type Backend } from '../fixtures/backends.js';
import { LARGE_TABLE, SMALL_TABLE, writeChartqa } from '../fixtures/chartqa.js';
import { ESCAPING_PATH, writeUnknownLayout, type Damage } from '../fixtures/datasetFiles.js';
import { GEO_STEMS, writeGeo170k } from '../fixtures/geo170k.js';
import { MULTIUI_FILE, writeMultiui } from '../fixtures/multiui.js';
import { writeRico } from '../fixtures/rico.js';

const SOURCE_INDEX = 1;
const BUILD_IMAGE = imageSchema.parse({});

/** A compact view of a stream for whole-sequence comparisons. */
function outline(items: SourceItem[]): string[] {
  return items.map((i) => ('problem' in i ? `${i.kind ?? 'damaged'}${i.kind === 'filtered' ? `:${i.filter}` : ''} ${i.sourceId}` : `sample ${i.sourceId}`));
}

/** The JSON-array sources, described enough to run the same bad-input cases on each. */
interface JsonSourceCase {
  name: string;
  write(store: ObjectStore, damage: Damage): Promise<Map<string, Buffer>>;
  config(uri: string): SourceConfig;
  /** The file damage is applied to. */
  file: string;
  /** Layout words the SourceError for an unknown layout must contain. */
  expected: RegExp;
}

const JSON_SOURCES: JsonSourceCase[] = [
  {
    name: 'ALLaVA',
    write: writeAllava,
    config: (uri) => sourceSchema.parse({ type: 'allava', uri }),
    file: ALLAVA_LAION_INSTRUCT,
    expected: /ALLaVA-4V layout/,
  },
  {
    name: 'ChartQA',
    write: (store, damage) => writeChartqa(store, { damage }),
    config: (uri) => sourceSchema.parse({ type: 'chartqa', uri }),
    file: 'ChartQA Dataset/train/train_human.json',
    expected: /ChartQA layout/,
  },
  {
    name: 'Geo170K',
    write: writeGeo170k,
    config: (uri) => sourceSchema.parse({ type: 'geo170k', uri }),
    file: 'qa_tuning.json',
    expected: /Geo170K layout.*images\//,
  },
  {
    name: 'MultiUI',
    write: writeMultiui,
    config: (uri) => sourceSchema.parse({ type: 'multiui', uri, files: [MULTIUI_FILE] }),
    file: MULTIUI_FILE,
    expected: /MultiUI layout/,
  },
];

/** The image sources' tests on one store: test/unit runs them on local disk, test/integration on S3. */
export function imageSourceTests(backend: Backend): void {
  describe(`image sources on ${backend.name}`, () => {
    before(() => backend.setUp());
    after(() => backend.tearDown());

    async function dataset(write: (store: ObjectStore) => Promise<Map<string, Buffer>>) {
      const uri = backend.freshRoot();
      const store = openStore(uri, backend.s3);
      return { uri, store, images: await write(store) };
    }
    const read = (config: SourceConfig) => collect(config, backend.s3, SOURCE_INDEX);
    const reader = (config: SourceConfig) => openSource(config, SOURCE_INDEX, backend.s3);

    /** Every sample's image reads back as the bytes the fixture wrote. */
    async function assertImages(config: SourceConfig, samples: SourceSample[], images: Map<string, Buffer>) {
      const r = reader(config);
      for (const s of samples) {
        assert.equal(s.image.sourceIndex, SOURCE_INDEX);
        assert.ok((await r.readImage(s.image)).equals(images.get(String(s.image.locator.path))!), `image of ${s.sourceId}`);
      }
    }

    describe('ALLaVA', () => {
      it('a uri one folder too deep (allava_laion/) is told which folder to point at', async () => {
        const { uri } = await dataset(writeAllava);
        const error = await read(sourceSchema.parse({ type: 'allava', uri: `${uri}/allava_laion` })).catch((e: unknown) => e);
        assert.ok(error instanceof SourceError);
        assert.match(
          error.message,
          /no ALLaVA-4V file found \(the root holds 'ALLaVA-Instruct-LAION-4V\.json', which the layout expects at 'allava_laion\/ALLaVA-Instruct-LAION-4V\.json': point uri at the folder that holds 'allava_laion\/'\)/,
        );
      });

      it('reads the ALLaVA-4V files present at the root, in file and array order, and filters Vision-FLAN questions', async () => {
        const { uri, images } = await dataset(writeAllava);
        const config = sourceSchema.parse({ type: 'allava', uri });
        const items = await read(config);
        assert.deepEqual(outline(items), [
          'sample allava_laion/ALLaVA-Instruct-LAION-4V.json#0:allava_laion_inst_100277305',
          'sample allava_laion/ALLaVA-Instruct-LAION-4V.json#1:allava_laion_inst_100277306',
          'sample allava_laion/ALLaVA-Instruct-LAION-4V.json#2:allava_laion_inst_100277307',
          'sample allava_laion/ALLaVA-Instruct-LAION-4V.json#3:allava_laion_inst_100277308',
          'sample allava_laion/ALLaVA-Caption-LAION-4V.json#0:allava_laion_cap_200000001',
          'filtered:multiple-choice allava_vflan/ALLaVA-Instruct-VFLAN-4V.json#0:allava_vflan_inst_0',
          'filtered:few-shot allava_vflan/ALLaVA-Instruct-VFLAN-4V.json#1:allava_vflan_inst_1',
          'sample allava_vflan/ALLaVA-Instruct-VFLAN-4V.json#2:allava_vflan_inst_2',
        ]);
        const [first, second] = samplesOf(items);
        assert.deepEqual(first, {
          sampleId: sampleIdFor('allava', first!.sourceId),
          source: 'allava',
          sourceId: 'allava_laion/ALLaVA-Instruct-LAION-4V.json#0:allava_laion_inst_100277305',
          licenseNote: config.licenseNote,
          image: { sourceIndex: SOURCE_INDEX, locator: { path: 'allava_laion/images/100277305.jpeg' } },
          originalInstruction: 'What mood does this scene convey, and which details create it?',
          originalAnswer: 'Answer 0: the scene is calm, with soft colours and rounded shapes.',
          caption: 'stock photo 0 of shapes',
        });
        assert.equal(second!.originalInstruction, 'Which colours dominate the picture, and how do they interact?');
        const [mc, fewShot] = problemsOf(items);
        assert.match(mc!.reason, /VFLAN-4V\.json#0:allava_vflan_inst_0: the question offers answer options/);
        assert.match(fewShot!.reason, /worked examples/);
        await assertImages(config, samplesOf(items), images);
        assert.deepEqual(await read(config), items, 'a second pass reads the same items');
      });

      it('reads only the files the config names', async () => {
        const { uri } = await dataset(writeAllava);
        const items = await read(sourceSchema.parse({ type: 'allava', uri, files: [ALLAVA_VFLAN_INSTRUCT] }));
        assert.equal(items.length, 3);
        const missing = await read(sourceSchema.parse({ type: 'allava', uri, files: ['allava_laion/nope.json'] })).catch((e: unknown) => e);
        assert.ok(missing instanceof SourceError);
        assert.match(missing.message, /'allava_laion\/nope\.json' not found \(the root holds other files/);
      });
    });

    describe('ChartQA', () => {
      it('reads splits and sets with labels and data tables, whichever folder the root is', async () => {
        const nested = await dataset((store) => writeChartqa(store));
        const flat = await dataset((store) => writeChartqa(store, { nested: false }));
        const config = sourceSchema.parse({ type: 'chartqa', uri: nested.uri, splits: ['train', 'val'] });
        const items = await read(config);
        assert.deepEqual(outline(items), [
          'sample train/human/0/10001.png',
          'sample train/human/1/10002.png',
          'filtered:too-short train/human/2/10003.png',
          'sample train/human/3/10004.png',
          'sample train/augmented/0/10001.png',
          'sample val/human/0/20001.png',
        ]);
        const flatItems = await read(sourceSchema.parse({ type: 'chartqa', uri: flat.uri, splits: ['train', 'val'] }));
        assert.deepEqual(outline(flatItems), outline(items));
        assert.deepEqual(
          samplesOf(flatItems).map((s) => s.sampleId),
          samplesOf(items).map((s) => s.sampleId),
          'ids do not depend on the root folder',
        );

        const [small, large, noTable] = samplesOf(items);
        assert.deepEqual(
          [small!.image.locator.path, small!.originalInstruction, small!.originalAnswer, small!.grounding],
          ['ChartQA Dataset/train/png/10001.png', 'What is the value of the tallest bar?', '42', SMALL_TABLE.trim()],
        );
        assert.ok(large!.grounding!.length < TABLE_LIMIT + 50 && large!.grounding!.endsWith(`(table cut at ${TABLE_LIMIT} characters)`));
        assert.ok(LARGE_TABLE.startsWith(large!.grounding!.split('\n…')[0]!), 'whole rows from the start of the table');
        assert.deepEqual([noTable!.originalInstruction, noTable!.originalAnswer, noTable!.grounding], ['How many bars exceed 20?', '3', undefined]);
        assert.match(problemsOf(items)[0]!.reason, /4 characters after cleaning, below 8/);
        await assertImages(config, samplesOf(items), nested.images);

        const bare = await read(sourceSchema.parse({ type: 'chartqa', uri: nested.uri, sets: ['human'], attachTables: false }));
        assert.equal(samplesOf(bare).length, 3);
        assert.ok(samplesOf(bare).every((s) => s.grounding === undefined));
      });

      it('reports a data table that is not valid UTF-8 as encoding:, not as U+FFFD grounding', async () => {
        const { uri, store } = await dataset((store) => writeChartqa(store));
        await store.put('ChartQA Dataset/train/tables/10001.csv', Buffer.from([0x59, 0x65, 0x61, 0x72, 0x2c, 0xe9, 0x74, 0xe9, 0x0a])); // Latin-1 "Year,été"
        const items = await read(sourceSchema.parse({ type: 'chartqa', uri }));
        const broken = problemsOf(items).filter((p) => p.kind === 'damaged');
        assert.deepEqual(
          broken.map((p) => [p.sourceId, p.kind === 'damaged' && p.code]),
          [
            ['train/human/0/10001.png', 'encoding'],
            ['train/augmented/0/10001.png', 'encoding'],
          ],
        );
        assert.match(broken[0]!.reason, /encoding: ChartQA Dataset\/train\/tables\/10001\.csv is not valid UTF-8/);
        assert.ok(samplesOf(items).every((s) => !s.grounding?.includes('\uFFFD')));
      });

      it('a uri one folder too deep (a split folder) is told which folder to point at', async () => {
        const { uri } = await dataset((store) => writeChartqa(store));
        const error = await read(sourceSchema.parse({ type: 'chartqa', uri: `${uri}/ChartQA Dataset/train` })).catch((e: unknown) => e);
        assert.ok(error instanceof SourceError);
        assert.match(error.message, /the root holds 'train_human\.json', which the layout expects at 'train\/train_human\.json': point uri at the folder that holds 'train\/'/);
      });

      it('fails before any sample when a configured split is missing', async () => {
        const { uri } = await dataset((store) => writeChartqa(store));
        const error = await read(sourceSchema.parse({ type: 'chartqa', uri, splits: ['train', 'test'] })).catch((e: unknown) => e);
        assert.ok(error instanceof SourceError);
        assert.match(error.message, /'ChartQA Dataset\/test\/test_human\.json', 'ChartQA Dataset\/test\/test_augmented\.json' not found/);
      });
    });

    describe('Geo170K', () => {
      it('reads stems without the preamble and choices, and the diagrams under images/', async () => {
        const { uri, images } = await dataset(writeGeo170k);
        const config = sourceSchema.parse({ type: 'geo170k', uri });
        const samples = samplesOf(await read(config));
        assert.deepEqual(
          samples.map((s) => s.sourceId),
          ['qa_tuning.json#0:1000', 'qa_tuning.json#1:1001', 'qa_tuning.json#2:1002'],
        );
        assert.deepEqual(
          samples.map((s) => s.originalInstruction),
          GEO_STEMS,
        );
        assert.deepEqual(
          [samples[0]!.image.locator.path, samples[0]!.originalAnswer],
          ['images/geoqa_plus/1000.png', 'Reasoning for question 0. Therefore, the answer is 60°.'],
          'the letter becomes the option',
        );
        await assertImages(config, samples, images);

        const both = await read(sourceSchema.parse({ type: 'geo170k', uri, files: ['qa_tuning.json', 'alignment.json'] }));
        assert.equal(outline(both).at(-1), 'sample alignment.json#0:geo3k_5');
        assert.equal(samplesOf(both).at(-1)!.originalInstruction, 'Render a clear and concise summary of the geometric figure.');
      });

      it('keeps its small line drawings only with the per-source image thresholds', async () => {
        const { uri } = await dataset(writeGeo170k);
        const config = sourceSchema.parse({ type: 'geo170k', uri });
        const [sample] = samplesOf(await read(config));
        const bytes = await reader(config).readImage(sample!.image);
        const byDefault = await normalizeImage(bytes, BUILD_IMAGE);
        assert.ok(!byDefault.ok && byDefault.reason.startsWith('too-small:'));
        const bySource = await normalizeImage(bytes, sourceImageConfig(BUILD_IMAGE, config));
        assert.ok(bySource.ok, JSON.stringify(bySource));
      });
    });

    describe('MultiUI', () => {
      it('keeps the instruction-like tasks and counts grounding, OCR and other tasks apart', async () => {
        const { uri, images } = await dataset(writeMultiui);
        const config = sourceSchema.parse({ type: 'multiui', uri, files: [MULTIUI_FILE] });
        const items = await read(config);
        const file = MULTIUI_FILE;
        assert.deepEqual(outline(items), [
          `sample ${file}#0:webqa_000001`,
          `filtered:task-grounding ${file}#1:elem_ground_000002`,
          `sample ${file}#2:embed_qa_000003`,
          `filtered:task-ocr ${file}#3:heading_ocr_000004`,
          `sample ${file}#4:meta_generate_000005`,
          `filtered:task-grounding ${file}#5:action_ground_000006`,
          `filtered:task-other ${file}#6:caption_000007`,
          `filtered:task-ocr ${file}#7:title_identification_000008`,
        ]);
        assert.match(problemsOf(items)[0]!.reason, /id 'elem_ground_000002' names a grounding task \(kept: webqa, embed_qa, meta_generate\)/);
        assert.equal(samplesOf(items)[0]!.originalInstruction, 'What is the price of the cheapest plan listed on this page?');
        assert.equal(samplesOf(items)[0]!.originalAnswer, 'The cheapest plan is Basic at $9 per month.', 'element boxes removed');
        await assertImages(config, samplesOf(items), images);

        const captions = await read(sourceSchema.parse({ type: 'multiui', uri, files: [MULTIUI_FILE], keepTasks: ['caption'] }));
        assert.deepEqual(
          samplesOf(captions).map((s) => s.sourceId),
          [`${file}#6:caption_000007`],
        );
      });
    });

    describe('RICO', () => {
      it('reads screenshots with their visible screen text, whichever folder the root is, skipping wireframes', async () => {
        const nested = await dataset((store) => writeRico(store));
        const flat = await dataset((store) => writeRico(store, { nested: false }));
        const config = sourceSchema.parse({ type: 'rico', uri: nested.uri });
        const items = await read(config);
        assert.deepEqual(outline(items), ['sample 0', 'sample 1', 'sample 10', 'sample 2'], 'listing order');
        const flatItems = await read(sourceSchema.parse({ type: 'rico', uri: flat.uri }));
        assert.deepEqual(
          samplesOf(flatItems).map((s) => [s.sampleId, s.grounding]),
          samplesOf(items).map((s) => [s.sampleId, s.grounding]),
        );

        const [zero, , ten] = samplesOf(items);
        assert.deepEqual(zero, {
          sampleId: sampleIdFor('rico', '0'),
          source: 'rico',
          sourceId: '0',
          licenseNote: 'RICO: CC BY 4.0 (interactionmining.org)',
          image: { sourceIndex: SOURCE_INDEX, locator: { path: 'combined/0.jpg' } },
          grounding: 'Screen 0 title\nNavigate up\nSign in\nForgot password?',
        });
        assert.equal(ten!.grounding, undefined, 'a screen without a hierarchy has no grounding');
        await assertImages(config, samplesOf(items), nested.images);
      });

      it('lists screenshots in every format the image stage handles (WebP, GIF, TIFF, AVIF; BMP to be refused there), none skipped', async () => {
        const { uri, store } = await dataset((store) => writeRico(store));
        for (const [n, ext] of [
          ['20', 'webp'],
          ['21', 'gif'],
          ['22', 'tiff'],
          ['23', 'avif'],
          ['24', 'bmp'],
          ['25', 'PNG'],
        ])
          await store.put(`combined/${n}.${ext}`, 'image bytes');
        const items = await read(sourceSchema.parse({ type: 'rico', uri }));
        assert.deepEqual(outline(items), ['sample 0', 'sample 1', 'sample 10', 'sample 2', 'sample 20', 'sample 21', 'sample 22', 'sample 23', 'sample 24', 'sample 25']);
      });

      it('reports a hierarchy without screenshot and one that is not JSON; a corrupt screenshot reaches the image stage', async () => {
        const { uri } = await dataset((store) => writeRico(store, { damage: { missingImage: 0, malformedRecord: 1, corruptImage: 2 } }));
        const config = sourceSchema.parse({ type: 'rico', uri });
        const items = await read(config);
        assert.deepEqual(outline(items), ['damaged 0', 'damaged 1', 'sample 10', 'sample 2']);
        assert.match(problemsOf(items)[0]!.reason, /^combined\/0\.json: a view hierarchy without its screenshot$/);
        assert.match(problemsOf(items)[1]!.reason, /^combined\/1\.json is not JSON/);
        const corrupt = await normalizeImage(await reader(config).readImage(samplesOf(items)[1]!.image), BUILD_IMAGE);
        assert.ok(!corrupt.ok && corrupt.reason.startsWith('corrupt:'));
      });

      it('fails on a root with only wireframes, or no RICO layout', async () => {
        const wireframes = await dataset(async (store) => {
          await store.put('semantic_annotations/5.png', 'png');
          return new Map();
        });
        for (const uri of [wireframes.uri, backend.freshRoot()]) {
          const error = await read(sourceSchema.parse({ type: 'rico', uri })).catch((e: unknown) => e);
          assert.ok(error instanceof SourceError);
          assert.match(error.message, /no RICO screenshots found .*RICO layout: 'combined\/<N>\.jpg'/);
        }
      });

      it('refuses a uri that points at the semantic_annotations/ wireframes, saying why', async () => {
        const { uri } = await dataset(async (store) => {
          await writeRico(store);
          return new Map();
        });
        const error = await read(sourceSchema.parse({ type: 'rico', uri: `${uri}/semantic_annotations/` })).catch((e: unknown) => e);
        assert.ok(error instanceof SourceError);
        assert.match(error.message, /'semantic_annotations\/' holds RICO's wireframe renderings, not screenshots; point uri at the folder holding 'combined\/'/);
      });
    });

    for (const source of JSON_SOURCES) {
      describe(`${source.name}: bad inputs`, () => {
        it('reports a malformed record in the middle with its index and byte offset, and reads on', async () => {
          const { uri, store } = await dataset((s) => source.write(s, { malformedRecord: 1 }));
          const items = await read(source.config(uri));
          const offset = (await store.get(source.file))!.indexOf('{"id": "broken"');
          const position = outline(items).indexOf(`damaged ${source.file}#1`);
          assert.ok(position > 0, outline(items).join('\n'));
          assert.match(problemsOf(items).find((p) => p.sourceId === `${source.file}#1`)!.reason, new RegExp(`element #1 at byte ${offset}: not valid JSON`));
          // LLaVA-style ids carry `#<index>`, ChartQA's `<split>/<set>/<index>/`.
          assert.match(outline(items)[position + 1]!, /#2\b|\/human\/2\//, 'the next record follows');
        });

        it('reads a truncated file up to its last complete record, then reports it', async () => {
          const { uri } = await dataset((s) => source.write(s, { truncated: true }));
          const clean = await dataset((s) => source.write(s, {}));
          const items = outline(await read(source.config(uri)));
          const whole = outline(await read(source.config(clean.uri)));
          const cut = items.findIndex((line) => line.startsWith('damaged'));
          assert.ok(cut > 0);
          assert.deepEqual(items.slice(0, cut), whole.slice(0, cut), 'the complete records before the cut');
          assert.match(items[cut]!, new RegExp(`^damaged ${source.file}#\\d+$`));
          assert.deepEqual(items.slice(cut + 1), whole.slice(cut + 1), 'the other files are still read');
        });

        it('refuses an image path that leaves the root, naming the record', async () => {
          const { uri } = await dataset((s) => source.write(s, { escapingPath: 1 }));
          const items = await read(source.config(uri));
          const problem = problemsOf(items).find((p) => p.reason.includes(ESCAPING_PATH));
          assert.ok(problem && problem.kind === 'damaged', outline(items).join('\n'));
          assert.match(problem.reason, /leaves the dataset root; not read/);
          assert.ok(samplesOf(items).every((s) => !String(s.image.locator.path).includes('..')));
        });

        it('yields a sample whose image is missing; reading it fails as not-found', async () => {
          const { uri } = await dataset((s) => source.write(s, { missingImage: 0 }));
          const config = source.config(uri);
          const [first] = samplesOf(await read(config));
          const error = await reader(config)
            .readImage(first!.image)
            .catch((e: unknown) => e);
          assert.ok(error instanceof StoreError && error.code === 'not-found', String(error));
          assert.match(error.message, new RegExp(String(first!.image.locator.path).replace(/[.*+?^${}()|[\]\\]/g, '\\$&')));
        });

        it('yields a sample whose image bytes are corrupt; the image stage rejects them', async () => {
          const { uri } = await dataset((s) => source.write(s, { corruptImage: 0 }));
          const config = source.config(uri);
          const [first] = samplesOf(await read(config));
          const result = await normalizeImage(await reader(config).readImage(first!.image), sourceImageConfig(BUILD_IMAGE, config));
          assert.ok(!result.ok && result.reason.startsWith('corrupt:'), JSON.stringify(result));
        });

        it('fails fast on a missing root or an unknown layout, naming the expected layout', async () => {
          const unknown = await dataset(async (s) => {
            await writeUnknownLayout(s);
            return new Map();
          });
          const cases: Array<[string, RegExp]> = [
            [backend.freshRoot(), /the root is missing or empty/],
            [unknown.uri, /the root holds other files/],
          ];
          for (const [uri, what] of cases) {
            const error = await read(source.config(uri)).catch((e: unknown) => e);
            assert.ok(error instanceof SourceError, String(error));
            assert.ok(error.message.startsWith(`${uri}: `));
            assert.match(error.message, what);
            assert.match(error.message, source.expected);
          }
        });
      });
    }

    it('reports a JSON file that is not an array as a layout error', async () => {
      const { uri } = await dataset(async (store) => {
        await store.put('qa_tuning.json', '{"data": []}');
        return new Map();
      });
      const error = await read(sourceSchema.parse({ type: 'geo170k', uri })).catch((e: unknown) => e);
      assert.ok(error instanceof SourceError);
      assert.match(error.message, /'qa_tuning\.json' is not a JSON array \(expected a JSON array, found "\{" at byte 0\); expected the Geo170K layout/);
    });
  });
}
