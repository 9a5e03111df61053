// The Hub layouts at scale (issue 29), ratios from one run. `parquet`: planning a 1M-row Hugging Face
// Parquet dataset with an image column (16 KiB `Image` structs, row groups of 100 rows): bytes read
// (/proc/self/io rchar) against the file's size, CPU per record against the img2dataset planner's
// (bench/planning.ts, 300k records, same run), RSS at each quarter. `zip`: members of a 9 GB-class
// zip64 (a 9 GiB hole, then 70,000 images): ranged reads and bytes per member after the central
// directory, through a counting store. Both datasets are sparse files written once by Python
// (pyarrow, zipfile) into $TMPDIR/mmif-bench/hub and kept for the next run.
// Run:   npx tsx bench/hubSources.ts [--rows 1000000] [--members 500]
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { parseBuildConfig } from '../config/buildConfig.js';
import { openSource } from '../sources/source.js';
import { ZipArchive } from '../sources/readers/zipArchive.js';
import { LocalStore } from '../storage/localStore.js';
import { loadAverage } from './harness.js';
import { img2datasetParquet, sideFileRow } from '../test/fixtures/cc3m.js';

const { values } = parseArgs({
  options: { rows: { type: 'string', default: '1000000' }, members: { type: 'string', default: '500' }, child: { type: 'string' } },
});
const ROOT = path.join(process.env.TMPDIR ?? tmpdir(), 'mmif-bench', 'hub');
const PYTHON = path.join('tools', 'venv', 'bin', 'python');
const IMG2DATASET_RECORDS = 300_000;
const ZIP_IMAGES = 70_000;

interface PlanResult {
  records: number;
  cpuUs: number;
  wallMs: number;
  readBytes: number;
  rssMiB: number[];
}

async function main(): Promise<void> {
  mkdirSync(ROOT, { recursive: true });
  const rows = Number(values.rows);
  const parquetDir = path.join(ROOT, `parquet-${rows}`);
  const cc3mDir = path.join(ROOT, `img2dataset-${IMG2DATASET_RECORDS}`);
  const zipDir = path.join(ROOT, 'zip9g');
  python(PARQUET_SCRIPT, parquetDir, String(rows));
  await img2datasetSideFiles(cc3mDir);
  python(ZIP_SCRIPT, zipDir, String(ZIP_IMAGES));
  console.log(`load ${loadAverage(1)}`);

  const parquetFile = path.join(parquetDir, 'data', 'train-00000-of-00001.parquet');
  const parquet = plan('parquet', parquetDir);
  const cc3m = plan('cc3m', cc3mDir);
  const size = statSync(parquetFile).size;
  console.log('| planning | records | file GiB | read MiB | read share | CPU µs/record | wall s | RSS MiB at 25/50/75/100% |');
  console.log('|---|---|---|---|---|---|---|---|');
  console.log(
    `| parquet (Image column) | ${parquet.records} | ${(size / 2 ** 30).toFixed(1)} | ${(parquet.readBytes / 2 ** 20).toFixed(1)} | ${((100 * parquet.readBytes) / size).toFixed(3)}% | ${(parquet.cpuUs / parquet.records).toFixed(2)} | ${(parquet.wallMs / 1000).toFixed(1)} | ${parquet.rssMiB.join(' / ')} |`,
  );
  console.log(
    `| img2dataset side files | ${cc3m.records} | - | ${(cc3m.readBytes / 2 ** 20).toFixed(1)} | - | ${(cc3m.cpuUs / cc3m.records).toFixed(2)} | ${(cc3m.wallMs / 1000).toFixed(1)} | ${cc3m.rssMiB.join(' / ')} |`,
  );
  console.log(`CPU per record, parquet / img2dataset: ${(parquet.cpuUs / parquet.records / (cc3m.cpuUs / cc3m.records)).toFixed(2)}`);
  await zipReads(zipDir);
  console.log(`load ${loadAverage(1)}`);
}

function python(script: string, dir: string, count: string): void {
  if (existsSync(path.join(dir, 'complete'))) return;
  mkdirSync(dir, { recursive: true });
  const run = spawnSync(PYTHON, ['-c', script, dir, count], { stdio: 'inherit' });
  if (run.status !== 0) throw new Error(`writing ${dir} failed`);
  writeFileSync(path.join(dir, 'complete'), '');
}

/** img2dataset's side files only (bench/planning.ts --side-files-only): planning reads nothing else. */
async function img2datasetSideFiles(dir: string): Promise<void> {
  if (existsSync(path.join(dir, 'complete'))) return;
  mkdirSync(dir, { recursive: true });
  for (let t = 0; t < IMG2DATASET_RECORDS / 10_000; t++) {
    const shard = String(t).padStart(5, '0');
    const rows = Array.from({ length: 10_000 }, (_, i) =>
      sideFileRow({ key: `${shard}${String(i).padStart(4, '0')}`, caption: `a generated scene number ${i}` }, { failed: false, width: 64, height: 48 }),
    );
    writeFileSync(path.join(dir, `${shard}.parquet`), await img2datasetParquet(rows));
    writeFileSync(path.join(dir, `${shard}.tar`), '');
  }
  writeFileSync(path.join(dir, 'complete'), '');
}

function plan(type: 'parquet' | 'cc3m', uri: string): PlanResult {
  const run = spawnSync(process.execPath, ['--import', 'tsx', fileURLToPath(import.meta.url), '--child', JSON.stringify({ type, uri })], { encoding: 'utf8' });
  if (run.status !== 0) throw new Error(`planning ${type} failed: ${run.stderr}`);
  return JSON.parse(run.stdout.trim().split('\n').at(-1)!) as PlanResult;
}

/** Streams every record of the source as planning does (segments, sample ids), in this process. */
async function child({ type, uri }: { type: 'parquet' | 'cc3m'; uri: string }): Promise<void> {
  const config = parseBuildConfig({ buildId: 'bench', maxSamples: 1, models: { default: { model: 'm' } }, output: path.join(ROOT, 'out'), sources: [{ type, uri }] }).sources[0]!;
  const reader = openSource(config, 0, {});
  const rchar = () => Number(/rchar: (\d+)/.exec(readFileSync('/proc/self/io', 'utf8'))![1]);
  const read0 = rchar();
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const total = type === 'parquet' ? Number(values.rows) : IMG2DATASET_RECORDS;
  const rssMiB: number[] = [];
  let records = 0;
  for await (const segment of reader.segments()) {
    records += segment.records.length;
    if (segment.sampleIds.length > 0) segment.sample(0);
    while (rssMiB.length < 4 && records >= ((rssMiB.length + 1) * total) / 4) rssMiB.push(Math.round(process.memoryUsage().rss / 2 ** 20));
  }
  const cpu = process.cpuUsage(cpu0);
  const result: PlanResult = { records, cpuUs: cpu.user + cpu.system, wallMs: performance.now() - t0, readBytes: rchar() - read0, rssMiB };
  console.log(JSON.stringify(result));
}

async function zipReads(dir: string): Promise<void> {
  const store = new LocalStore(dir);
  const counted = { reads: 0, bytes: 0 };
  const getRange = store.getRange.bind(store);
  store.getRange = (key, start, end) => {
    counted.reads++;
    counted.bytes += end - start;
    return getRange(key, start, end);
  };
  const size = statSync(path.join(dir, 'images.zip')).size;
  const t0 = performance.now();
  const archive = await ZipArchive.open(store, 'images.zip', size);
  const directory = { ...counted, ms: performance.now() - t0 };
  const members = Number(values.members);
  const t1 = performance.now();
  let bytesOut = 0;
  for (let i = 0; i < members; i++) bytesOut += (await archive.read(`images/${String((i * 7919) % ZIP_IMAGES).padStart(7, '0')}.jpg`)).length;
  const perMember = (n: number) => (n / members).toFixed(2);
  console.log('| zip | archive GiB | members | directory: reads | directory: MiB | directory: s | per member: reads | per member: KiB read (KiB out) | per member: ms |');
  console.log('|---|---|---|---|---|---|---|---|---|');
  console.log(
    `| local | ${(size / 2 ** 30).toFixed(1)} | ${[...archive.members()].length} | ${directory.reads} | ${(directory.bytes / 2 ** 20).toFixed(1)} | ${(directory.ms / 1000).toFixed(2)} | ${perMember(counted.reads - directory.reads)} | ${perMember((counted.bytes - directory.bytes) / 1024)} (${perMember(bytesOut / 1024)}) | ${perMember(performance.now() - t1)} |`,
  );
}

/** A file object that leaves long runs of zeros as holes: the datasets' image bytes cost no disk. */
const SPARSE = `
import re
ZEROS = re.compile(rb'\\x00{8192,}')
class Sparse:
    def __init__(self, f): self.f = f
    def write(self, b):
        data, pos = bytes(b), 0
        for m in ZEROS.finditer(data):
            self.f.write(data[pos:m.start()])
            self.f.seek(m.end() - m.start(), 1)
            pos = m.end()
        self.f.write(data[pos:])
        return len(data)
    def seek(self, *a): return self.f.seek(*a)
    def tell(self): return self.f.tell()
    def flush(self): return self.f.flush()
    def seekable(self): return True
    def writable(self): return True
    def readable(self): return False
    def close(self):
        self.f.truncate(self.f.tell()); self.f.close()
    closed = property(lambda self: self.f.closed)
`;

/** 1M rows as datasets writes an image dataset: {bytes, path} structs, 100 rows a row group, the huggingface metadata. */
export const PARQUET_SCRIPT = `
import json, os, sys
import pyarrow as pa, pyarrow.parquet as pq
${SPARSE}
out, rows = sys.argv[1], int(sys.argv[2])
os.makedirs(os.path.join(out, 'data'), exist_ok=True)
features = {'id': {'dtype': 'string', '_type': 'Value'}, 'image': {'_type': 'Image'}, 'question': {'dtype': 'string', '_type': 'Value'}, 'answer': {'dtype': 'string', '_type': 'Value'}}
schema = pa.schema([('id', pa.string()), ('image', pa.struct([('bytes', pa.binary()), ('path', pa.string())])), ('question', pa.string()), ('answer', pa.string())],
                   metadata={'huggingface': json.dumps({'info': {'features': features}})})
image = bytes(16384)
f = Sparse(open(os.path.join(out, 'data', 'train-00000-of-00001.parquet'), 'wb'))
writer = pq.ParquetWriter(f, schema, compression={'id': 'snappy', 'image': 'none', 'question': 'snappy', 'answer': 'snappy'}, use_dictionary=['question', 'answer'], data_page_size=1 << 20)
for start in range(0, rows, 10000):
    n = min(10000, rows - start)
    writer.write_table(pa.table({
        'id': [f'row-{i:07d}' for i in range(start, start + n)],
        'image': [{'bytes': image, 'path': None}] * n,
        'question': [f'What is shown in chart {i % 5000}?' for i in range(start, start + n)],
        'answer': [str(i % 97) for i in range(start, start + n)],
    }, schema=schema), row_group_size=100)
writer.close()
f.close()
`;

/** A 9 GiB filler member kept as a hole, then the images (zip64 by size and by member count). */
const ZIP_SCRIPT = `
import os, random, sys, zipfile
${SPARSE}
out, n = sys.argv[1], int(sys.argv[2])
random.seed(1)
f = Sparse(open(os.path.join(out, 'images.zip'), 'wb'))
with zipfile.ZipFile(f, 'w', allowZip64=True) as z:
    with z.open(zipfile.ZipInfo('filler.bin', (2024, 1, 1, 0, 0, 0)), 'w', force_zip64=True) as w:
        chunk = bytes(1 << 24)
        for _ in range(9 * 64):
            w.write(chunk)
    for i in range(n):
        size = random.randint(8000, 40000)
        body = bytes(random.getrandbits(8) for _ in range(64)) * (size // 64)
        z.writestr(f'images/{i:07d}.jpg', body, compress_type=zipfile.ZIP_DEFLATED if i % 2 else zipfile.ZIP_STORED)
f.close()
`;

if (values.child) await child(JSON.parse(values.child) as { type: 'parquet' | 'cc3m'; uri: string });
else await main();
