/**
 * A file the OS cannot name (not UTF-8) and a directory named like an image are problems of that
 * file alone, listed with their code, in every reader that lists a local dataset's files; the rest of
 * the source is read (issue 34: one such name made the whole source fail with ENOENT stat, a
 * directory named x.jpg was skipped without a word).
 */
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { sourceSchema } from '../../config/sourceConfig.js';
import { collect } from '../fixtures/backends.js';
import { sceneJpeg } from '../fixtures/images.js';

const READERS = [
  { type: 'cc3m', layout: 'files', folder: '00000', ids: ['000000001', '000000003'] },
  { type: 'cc3m', layout: 'flat', folder: '', ids: ['000000001', '000000003'] },
  { type: 'imagefolder', folder: 'train', ids: ['train/000000001.jpg', 'train/000000003.jpg'] },
  { type: 'rico', folder: '', ids: ['000000001', '000000003'] },
] as const;

for (const reader of READERS) {
  test(`${reader.type}${'layout' in reader ? ` (${reader.layout})` : ''}: a name that is not UTF-8 and a directory named 000000002.jpg are listed problems; the other records are read`, async () => {
    const root = await mkdtemp(path.join(tmpdir(), 'mmif-unreadable-'));
    try {
      const folder = path.join(root, reader.folder);
      await mkdir(folder, { recursive: true });
      for (const n of [1, 3]) {
        await writeFile(path.join(folder, `00000000${n}.jpg`), await sceneJpeg(n, 64, 64));
        await writeFile(path.join(folder, `00000000${n}.txt`), `caption ${n}`);
      }
      await writeFile(Buffer.concat([Buffer.from(`${folder}/bad`), Buffer.from([0xff, 0xfe]), Buffer.from('name.jpg')]), await sceneJpeg(2, 64, 64));
      await mkdir(path.join(folder, '000000002.jpg'));
      const at = reader.folder ? `${reader.folder}/` : '';
      const items = await collect(sourceSchema.parse({ type: reader.type, uri: root, ...('layout' in reader ? { layout: reader.layout } : {}) }), {});
      assert.deepEqual(
        items.filter((i) => !('problem' in i)).map((i) => ('problem' in i ? '' : i.sourceId)),
        reader.ids,
      );
      const problems = items.flatMap((i) => ('problem' in i && i.kind === 'damaged' ? [`${i.code}: ${i.reason}`] : []));
      assert.equal(problems.length, 2, problems.join('\n'));
      assert.ok(problems.includes(`not-a-file: ${at}000000002.jpg: a directory, not a file`), problems.join('\n'));
      assert.ok(
        problems.some((p) => p.startsWith(`unreadable-file: ${at}bad\uFFFD\uFFFDname.jpg: its name is not valid UTF-8`)),
        problems.join('\n'),
      );
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });
}
