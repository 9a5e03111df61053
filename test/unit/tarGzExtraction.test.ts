import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { SourceError } from '../../sources/contract.js';
import { extractedOrigin, extractedView } from '../../sources/readers/extractedView.js';
import { completedExtractions, extractTarGzArchives, tarGzArchives } from '../../sources/readers/tarGzExtraction.js';
import { extractEverySource, extractionProblems } from '../../sources/sourceArchives.js';
import { openSources } from '../../sources/source.js';
import { parseBuildConfig } from '../../config/buildConfig.js';
import { buildProblems } from '../../pipeline/planning/buildChecks.js';
import { validation } from '../../cli/commands/validate.js';
import { LocalStore } from '../../storage/localStore.js';
import { packTar, type TarFile } from '../fixtures/cc3m.js';

const MULTIUI_TGZ = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'hub', 'data', 'multiui-tgz');
const roots: string[] = [];
after(() => roots.forEach((r) => rmSync(r, { recursive: true, force: true })));

const FILES: TarFile[] = [
  { path: 'data/stage1.json', data: '[{"id":"webqa_0","image":"shots/0.png"}]' },
  { path: 'shots', data: '', type: '5' },
  { path: 'shots/0.png', data: Buffer.alloc(3000, 1) },
  { path: 'shots/1.png', data: Buffer.alloc(5000, 2) },
];

/** A root holding `files` as one gzip'd tar cut into `parts` pieces (`name.00`, `.01`, ...), or whole when parts is 1. */
function rootWith(files: TarFile[], parts: number, name = 'multiui.tar.gz'): { dir: string; gz: Buffer; partFiles: string[] } {
  const dir = mkdtempSync(path.join(tmpdir(), 'mmif-targz-'));
  roots.push(dir);
  const gz = gzipSync(packTar(files));
  const partFiles: string[] = [];
  if (parts === 1) {
    writeFileSync(path.join(dir, name), gz);
    partFiles.push(name);
  } else {
    const size = Math.ceil(gz.length / parts);
    for (let i = 0; i < parts; i++) {
      const file = `${name}.${String(i).padStart(2, '0')}`;
      writeFileSync(path.join(dir, file), gz.subarray(i * size, (i + 1) * size));
      partFiles.push(file);
    }
  }
  return { dir, gz, partFiles };
}

async function keys(store: LocalStore | ReturnType<typeof extractedView>, prefix = ''): Promise<string[]> {
  const out: string[] = [];
  for await (const o of store.list(prefix)) out.push(o.key);
  return out;
}

describe("gzip'd tars extracted once into the source's store", () => {
  it('groups split parts in order, whole archives alone', () => {
    const objects = ['b/x.tgz', 'a.tar.gz.10', 'a.tar.gz.02', 'a.tar.gz.00', 'a.tar.gz.01', 'c.tar', 'd.zip'].map((key) => ({ key, size: 1 }));
    assert.deepEqual(
      tarGzArchives(objects).map((a) => [a.key, a.parts.map((p) => p.key)]),
      [
        ['a.tar.gz', ['a.tar.gz.00', 'a.tar.gz.01', 'a.tar.gz.02', 'a.tar.gz.10']],
        ['b/x.tgz', ['b/x.tgz']],
      ],
    );
  });

  it("reads split parts' members as if unpacked by hand beside them, with a completion marker written last", async () => {
    const { dir } = rootWith(FILES, 3);
    const store = new LocalStore(dir);
    const [extraction] = await extractTarGzArchives(store);
    assert.equal(extraction!.members, 3);
    assert.deepEqual(extraction!.refused, []);
    assert.equal(extraction!.damage, undefined);
    assert.deepEqual(readFileSync(path.join(dir, '.mmif-extracted/multiui.tar.gz/shots/1.png')), Buffer.alloc(5000, 2));

    const view = extractedView(new LocalStore(dir));
    assert.deepEqual(await view.get('shots/0.png'), Buffer.alloc(3000, 1));
    assert.deepEqual(extractedOrigin(view, 'shots/0.png'), { file: 'multiui.tar.gz', member: 'shots/0.png' });
    assert.deepEqual(await view.getRange('shots/1.png', 10, 20), Buffer.alloc(10, 2));
    assert.equal(await view.exists('data/stage1.json'), true);
    assert.equal(await view.get('shots/2.png'), undefined);
    // Listed in key order among the root's own files; the cache folder itself is never listed.
    assert.deepEqual(await keys(view), ['data/stage1.json', 'multiui.tar.gz.00', 'multiui.tar.gz.01', 'multiui.tar.gz.02', 'shots/0.png', 'shots/1.png']);
    assert.deepEqual(await keys(view, 'shots/'), ['shots/0.png', 'shots/1.png']);
  });

  it('skips a complete extraction on a re-plan and redoes an interrupted one', async () => {
    const { dir } = rootWith(FILES, 2);
    await extractTarGzArchives(new LocalStore(dir));
    const member = path.join(dir, '.mmif-extracted/multiui.tar.gz/shots/0.png');
    rmSync(member);
    await extractTarGzArchives(new LocalStore(dir));
    assert.equal(existsSync(member), false, 'a complete extraction is not redone');

    // Interrupted: members written, no marker. The view does not see them; the next plan extracts again.
    rmSync(path.join(dir, '.mmif-extracted/.complete'), { recursive: true });
    assert.deepEqual(await completedExtractions(new LocalStore(dir)), []);
    assert.equal(await extractedView(new LocalStore(dir)).get('shots/1.png'), undefined);
    await extractTarGzArchives(new LocalStore(dir));
    assert.deepEqual(readFileSync(member), Buffer.alloc(3000, 1));
    assert.deepEqual(await extractedView(new LocalStore(dir)).get('shots/1.png'), Buffer.alloc(5000, 2));
  });

  it('refuses members whose path leaves the archive, links and devices, by name, writing none of them', async () => {
    const { dir } = rootWith(
      [
        { path: '../outside.txt', data: 'x' },
        { path: '/etc/absolute.txt', data: 'x' },
        { path: 'shots/link.png', data: '', type: '2' },
        { path: 'shots/dev', data: '', type: '3' },
        { path: 'shots/ok.png', data: 'fine' },
      ],
      1,
      'images.tgz',
    );
    const [extraction] = await extractTarGzArchives(new LocalStore(dir));
    assert.equal(extraction!.members, 1);
    assert.deepEqual(extraction!.refused, [
      "'../outside.txt': its path leaves the archive",
      "'/etc/absolute.txt': its path leaves the archive",
      "'shots/link.png': a symbolic link",
      "'shots/dev': a character device",
    ]);
    assert.equal(existsSync(path.join(dir, '.mmif-extracted/outside.txt')), false);
    assert.equal(existsSync(path.join(path.dirname(dir), 'outside.txt')), false);
    assert.equal(existsSync(path.join(dir, '.mmif-extracted/images.tgz/shots/link.png')), false);
    const problems = extractionProblems(extraction!);
    assert.equal(problems.length, 4);
    assert.ok(problems.every((p) => p.code === 'archive-member-refused' && p.reason.startsWith('images.tgz: member ')));
  });

  it('names the archive and the part where a split archive is corrupt, keeping the members before it', async () => {
    // Bytes that do not compress (a chain of hashes), so each part holds members' data.
    const noise = (seed: number) => Buffer.concat(Array.from({ length: 625 }, (_, k) => createHash('sha256').update(`${seed}/${k}`).digest()));
    const files: TarFile[] = Array.from({ length: 6 }, (_, i) => ({ path: `shots/${i}.bin`, data: noise(i) }));
    const { dir, partFiles } = rootWith(files, 3);
    const damagedPart = path.join(dir, partFiles[2]!);
    const bytes = readFileSync(damagedPart);
    bytes.fill(0x55, 100, 400);
    writeFileSync(damagedPart, bytes);
    const [extraction] = await extractTarGzArchives(new LocalStore(dir));
    assert.match(extraction!.damage!, /^multiui\.tar\.gz is corrupt: .* \(reading part multiui\.tar\.gz\.02\)$/);
    assert.ok(extraction!.members >= 1 && extraction!.members < 6, `members before the damage are kept: ${extraction!.members}`);
    const view = extractedView(new LocalStore(dir));
    assert.deepEqual(await view.get('shots/0.bin'), files[0]!.data);
    const [problem] = extractionProblems(extraction!);
    assert.equal(problem!.code, 'archive-damaged');
    assert.match(problem!.reason, /multiui\.tar\.gz\.02.*the members before the damage are read$/);
  });

  it('names a truncated archive, and a split archive missing a part', async () => {
    const cut = rootWith(FILES, 1);
    const file = path.join(cut.dir, 'multiui.tar.gz');
    writeFileSync(file, cut.gz.subarray(0, cut.gz.length - 40));
    const [truncated] = await extractTarGzArchives(new LocalStore(cut.dir));
    assert.match(truncated!.damage!, /^multiui\.tar\.gz is (corrupt|truncated)/);

    const gap = rootWith(FILES, 3);
    rmSync(path.join(gap.dir, gap.partFiles[1]!));
    const [missing] = await extractTarGzArchives(new LocalStore(gap.dir));
    assert.equal(missing!.damage, 'multiui.tar.gz is missing part .01');
    assert.equal(missing!.members, 0);
    // Once the part is back, its sizes differ from the marker's: extracted again.
    writeFileSync(path.join(gap.dir, gap.partFiles[1]!), gap.gz.subarray(Math.ceil(gap.gz.length / 3), 2 * Math.ceil(gap.gz.length / 3)));
    const [whole] = await extractTarGzArchives(new LocalStore(gap.dir));
    assert.equal(whole!.damage, undefined);
    assert.equal(whole!.members, 3);
  });

  it('fails in one line naming the root when its cache cannot be written', async () => {
    const { dir } = rootWith(FILES, 1);
    writeFileSync(path.join(dir, '.mmif-extracted'), 'a file where the cache folder goes');
    await assert.rejects(extractTarGzArchives(new LocalStore(dir)), (err: unknown) => {
      assert.ok(err instanceof SourceError, String(err));
      assert.ok(err.message.startsWith(`${dir}: cannot write the extraction cache .mmif-extracted/multiui.tar.gz/ of multiui.tar.gz: `), err.message);
      assert.doesNotMatch(err.message, /\n/);
      return true;
    });
    assert.ok(statSync(path.join(dir, '.mmif-extracted')).isFile());
  });

  it('maps an archive in a sub-folder to that folder', async () => {
    const { dir } = rootWith(FILES, 1);
    mkdirSync(path.join(dir, 'sub'));
    writeFileSync(path.join(dir, 'sub/images.tar.gz'), readFileSync(path.join(dir, 'multiui.tar.gz')));
    rmSync(path.join(dir, 'multiui.tar.gz'));
    await extractTarGzArchives(new LocalStore(dir));
    const view = extractedView(new LocalStore(dir));
    assert.deepEqual(await view.get('sub/shots/0.png'), Buffer.alloc(3000, 1));
    assert.deepEqual(extractedOrigin(view, 'sub/shots/0.png'), { file: 'sub/images.tar.gz', member: 'shots/0.png' });
    assert.equal(await view.get('shots/0.png'), undefined);
    assert.deepEqual(await keys(view, 'sub/'), ['sub/data/stage1.json', 'sub/images.tar.gz', 'sub/shots/0.png', 'sub/shots/1.png']);
    assert.deepEqual(await keys(view, 'sub/sh'), ['sub/shots/0.png', 'sub/shots/1.png']);
  });
});

describe("an extraction's problems reach the build with the source's records", () => {
  it('a truncated MultiUI part: the records before the damage read, then one archive-damaged problem naming the part', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'mmif-targz-source-'));
    roots.push(dir);
    cpSync(MULTIUI_TGZ, dir, { recursive: true });
    const last = path.join(dir, 'multiui.tar.gz.02');
    writeFileSync(last, readFileSync(last).subarray(0, 200));
    const config = parseBuildConfig({ buildId: 'b', output: path.join(dir, 'out'), sources: [{ type: 'multiui', uri: dir }], maxSamples: 10, models: { default: { model: 'm' } } });
    assert.deepEqual(await extractEverySource(config.sources, {}), []);
    const [reader] = openSources(config.sources, {});
    const records: Array<string | { code?: string; reason: string }> = [];
    for await (const segment of reader!.segments()) records.push(...segment.records);
    const problems = records.filter((r) => typeof r !== 'string' && r.code?.startsWith('archive-'));
    assert.equal(problems.length, 1, JSON.stringify(records));
    assert.match(
      (problems[0] as { reason: string }).reason,
      /^multiui\.tar\.gz is (corrupt|truncated).*\(reading part multiui\.tar\.gz\.02\); the members before the damage are read$/,
    );
    assert.ok(records.filter((r) => typeof r === 'string').length > 0, 'the records in the JSON arrays before the damage are read');
  });
});

describe('each root listed once per build for its archives', () => {
  const multiuiConfig = (root: string) =>
    parseBuildConfig({ buildId: 'b', output: path.join(root, 'out'), sources: [{ type: 'multiui', uri: root }], maxSamples: 10, models: { default: { model: 'm' } } });

  it("a root whose cache cannot be written: extraction hands back its one line, and the checks list it without reading the source's layout", async () => {
    const { dir } = rootWith(FILES, 1);
    writeFileSync(path.join(dir, '.mmif-extracted'), 'a file where the cache folder goes');
    const config = multiuiConfig(dir);
    const unextracted = await extractEverySource(config.sources, {});
    assert.equal(unextracted.length, 1);
    assert.equal(unextracted[0]!.source, 0);
    assert.ok(unextracted[0]!.problem.startsWith(`${dir}: cannot write the extraction cache .mmif-extracted/multiui.tar.gz/ of multiui.tar.gz: `), unextracted[0]!.problem);
    const problems = await buildProblems(config, unextracted);
    assert.deepEqual(problems, [`sources[0] (multiui): ${unextracted[0]!.problem}`]);
  });

  it('`mmif validate` lists the root once: the extraction walks it, the checks and layouts read the markers', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'mmif-targz-walks-'));
    roots.push(dir);
    cpSync(MULTIUI_TGZ, dir, { recursive: true });
    const listed: string[] = [];
    const list = LocalStore.prototype.list;
    LocalStore.prototype.list = function (this: LocalStore, prefix: string) {
      if (this.root === dir) listed.push(prefix);
      return list.call(this, prefix);
    };
    try {
      const result = await validation(multiuiConfig(dir), 'config.json');
      assert.deepEqual(result.problems, []);
    } finally {
      LocalStore.prototype.list = list;
    }
    assert.equal(listed.filter((prefix) => prefix === '').length, 1, JSON.stringify(listed));
    assert.equal((await completedExtractions(new LocalStore(dir))).length, 1);
  });
});
