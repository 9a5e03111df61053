// Zip libraries side by side, reading members of one large archive in place through positional reads
// (what a ranged GET on S3 is): yauzl through sources/readers/zipArchive.ts (the reader the engine
// uses), @zip.js/zip.js with a custom Reader, and unzipper's Open.custom. Per library, in a process of
// its own: the central directory's reads, bytes and time, then per member read the reads, bytes and
// time, and the RSS added. The archive: 70,000 members (zip64 by count), half stored, half deflated,
// 1.5-40 KB each, written by Python's zipfile. docs/adr/ has the figures and the choice.
//
// Run:   npm install --no-save @zip.js/zip.js@2.24.0 unzipper@0.12.5   (the two not chosen)
//        npx tsx bench/zipLibraries.ts [--members 300]
// or, leaving the project's node_modules alone: install them in another folder and name it in
// BENCH_MODULES (e.g. BENCH_MODULES=/tmp/zipbench/node_modules).
import { spawnSync } from 'node:child_process';
import { createReadStream, existsSync, mkdirSync, openSync, readSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { ZipArchive } from '../sources/readers/zipArchive.js';
import { LocalStore } from '../storage/localStore.js';

const { values } = parseArgs({ options: { members: { type: 'string', default: '300' }, lib: { type: 'string' } } });
const ENTRIES = 70_000;
const DIR = path.join(process.env.TMPDIR ?? tmpdir(), 'mmif-bench', 'zip-libraries');
const ARCHIVE = path.join(DIR, 'big.zip');
const LIBS = ['yauzl', 'zipjs', 'unzipper'] as const;

const nameOf = (k: number) => `images/${String(Math.floor(k / 1000)).padStart(3, '0')}/${String(k).padStart(7, '0')}.jpg`;

if (values.lib) await measure(values.lib as (typeof LIBS)[number], Number(values.members));
else main();

function main(): void {
  if (!existsSync(ARCHIVE)) {
    mkdirSync(DIR, { recursive: true });
    const script = `
import random, sys, zipfile
random.seed(1)
with zipfile.ZipFile(sys.argv[1], 'w', allowZip64=True) as z:
    for i in range(${ENTRIES}):
        size = random.randint(1500, 40000)
        body = bytes(random.getrandbits(8) for _ in range(64)) * (size // 64)
        z.writestr(f'images/{i // 1000:03d}/{i:07d}.jpg', body, compress_type=zipfile.ZIP_DEFLATED if i % 2 else zipfile.ZIP_STORED)`;
    const made = spawnSync(path.join('tools', 'venv', 'bin', 'python'), ['-c', script, ARCHIVE], { stdio: 'inherit' });
    if (made.status !== 0) throw new Error('could not write the archive');
  }
  console.log(`archive: ${ENTRIES} members, ${(statSync(ARCHIVE).size / 2 ** 20).toFixed(0)} MiB; members read: ${values.members}`);
  console.log('| library | directory: reads | directory: MiB | directory: s | per member: reads | per member: KiB read | per member: ms | RSS added MiB |');
  console.log('|---|---|---|---|---|---|---|---|');
  for (const lib of LIBS) {
    const run = spawnSync(process.execPath, ['--import', 'tsx', fileURLToPath(import.meta.url), '--lib', lib, '--members', values.members], { encoding: 'utf8' });
    console.log(run.status === 0 ? run.stdout.trim() : `| ${lib} | failed: ${run.stderr.trim().split('\n').at(-1)} |`);
  }
}

/** A library the project does not depend on, from BENCH_MODULES when set. */
function importOther(name: string): Promise<unknown> {
  const from = createRequire(process.env.BENCH_MODULES ? path.join(process.env.BENCH_MODULES, '..', 'bench.js') : import.meta.url);
  return import(pathToFileURL(from.resolve(name)).href);
}

async function measure(lib: (typeof LIBS)[number], members: number): Promise<void> {
  const size = statSync(ARCHIVE).size;
  const fd = openSync(ARCHIVE, 'r');
  const counted = { reads: 0, bytes: 0 };
  const pread = (start: number, end: number): Buffer => {
    counted.reads++;
    counted.bytes += end - start;
    const buffer = Buffer.alloc(end - start);
    readSync(fd, buffer, 0, end - start, start);
    return buffer;
  };
  const names = Array.from({ length: members }, (_, i) => nameOf((i * 7919) % ENTRIES));
  const rss = process.memoryUsage().rss;
  const t0 = performance.now();
  let read: (name: string) => Promise<Buffer | Uint8Array>;
  if (lib === 'yauzl') {
    const store = new LocalStore(DIR);
    const getRange = store.getRange.bind(store);
    store.getRange = (key, start, end) => {
      counted.reads++;
      counted.bytes += end - start;
      return getRange(key, start, end);
    };
    const archive = await ZipArchive.open(store, 'big.zip', size);
    read = (name) => archive.read(name);
  } else if (lib === 'zipjs') {
    const zipjs = (await importOther('@zip.js/zip.js')) as any;
    zipjs.configure({ useWebWorkers: false });
    class Reader extends zipjs.Reader {
      size = size;
      async readUint8Array(index: number, length: number) {
        return new Uint8Array(pread(index, index + length));
      }
    }
    const entries = new Map((await new zipjs.ZipReader(new Reader()).getEntries()).map((e: any) => [e.filename, e])) as Map<string, any>;
    read = (name) => entries.get(name).getData(new zipjs.Uint8ArrayWriter());
  } else {
    const unzipper = ((await importOther('unzipper')) as any).default;
    const directory = await unzipper.Open.custom({
      size: async () => size,
      stream: (offset: number, length?: number) => {
        const end = length ? offset + length : size;
        counted.reads++;
        counted.bytes += end - offset;
        return createReadStream(ARCHIVE, { start: offset, end: end - 1 });
      },
    });
    const entries = new Map(directory.files.map((f: any) => [f.path, f])) as Map<string, any>;
    read = (name) => entries.get(name).buffer();
  }
  const t1 = performance.now();
  const opened = { ...counted };
  for (const name of names) if ((await read(name)).length === 0) throw new Error(`${name} read empty`);
  const t2 = performance.now();
  const perMember = (n: number) => (n / members).toFixed(2);
  console.log(
    `| ${lib} | ${opened.reads} | ${(opened.bytes / 2 ** 20).toFixed(1)} | ${((t1 - t0) / 1000).toFixed(2)} | ${perMember(counted.reads - opened.reads)} | ${perMember((counted.bytes - opened.bytes) / 1024)} | ${perMember(t2 - t1)} | ${Math.round((process.memoryUsage().rss - rss) / 2 ** 20)} |`,
  );
}
