// Memory and speed of streaming one huge ALLaVA JSON array: writes an ALLaVA-Instruct-like file of
// N records (default 500k, ~250 MB, indented like the Hub's files) to a temp dir, then streams it
// twice: through the bare parser (sources/readers/jsonArrayStream.ts) and through the ALLaVA reader
// (parser + record checks + question cleaning). Prints records/s and peak RSS of each pass; the temp
// dir is deleted afterwards. Peak RSS staying near the baseline, far below the file size, is the point.
//
// Run:   npx tsx bench/allavaMemory.ts [--records N]
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { once } from 'node:events';
import { parseArgs } from 'node:util';
import { sourceSchema } from '../config/sourceConfig.js';
import { jsonArrayElements } from '../sources/readers/jsonArrayStream.js';
import { openSource } from '../sources/source.js';

const { values } = parseArgs({ options: { records: { type: 'string', default: '500000' } } });
const RECORDS = Number(values.records);
const FILE = 'allava_laion/ALLaVA-Instruct-LAION-4V.json';
const MB = 1024 * 1024;

const QUESTIONS = [
  'What might be the purpose of the arrangement of objects on the table, and what does it suggest about the occasion?',
  'Considering the lighting and the shadows, at what time of day was this photograph most likely taken, and why?',
  'How does the composition of this image guide the viewer’s attention toward the main subject?',
];
const ANSWER =
  'The arrangement suggests a carefully prepared gathering: the plates are evenly spaced, the glasses are aligned with ' +
  'each setting and a central decoration anchors the table. Such attention to symmetry usually signals a formal or ' +
  'celebratory occasion, perhaps a family dinner or a small reception, where hosts want guests to feel expected and welcome.';

function record(i: number): unknown {
  const id = 100_000_000 + i;
  return {
    id: `allava_laion_inst_${id}`,
    image: `allava_laion/images/${id}.jpeg`,
    conversations: [
      { from: 'human', value: `<image>\n${QUESTIONS[i % QUESTIONS.length]}` },
      { from: 'gpt', value: ANSWER },
    ],
    original_caption: `Stock photo number ${id} of a dinner table set for guests`,
    url: `https://example.com/photos/${id}.jpg`,
  };
}

/** Writes the array element by element, honouring backpressure, so generating costs no memory either. */
async function writeArray(file: string): Promise<void> {
  const out = createWriteStream(file);
  out.write('[\n');
  for (let i = 0; i < RECORDS; i++) {
    const text = JSON.stringify(record(i), null, 4).replace(/^/gm, '    ');
    if (!out.write(i + 1 < RECORDS ? `${text},\n` : `${text}\n`)) await once(out, 'drain');
  }
  out.end(']\n');
  await once(out, 'finish');
}

/** Runs `pass` while sampling RSS every 20 ms; returns items/s and the peak. */
async function measure(name: string, pass: () => Promise<number>): Promise<void> {
  const baseline = process.memoryUsage().rss;
  let peak = baseline;
  const timer = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 20);
  const started = performance.now();
  const count = await pass();
  const seconds = (performance.now() - started) / 1000;
  clearInterval(timer);
  peak = Math.max(peak, process.memoryUsage().rss);
  console.log(
    `${name}: ${count} records in ${seconds.toFixed(1)} s = ${Math.round(count / seconds)} records/s; ` +
      `RSS baseline ${(baseline / MB).toFixed(0)} MB, peak ${(peak / MB).toFixed(0)} MB (+${((peak - baseline) / MB).toFixed(0)} MB)`,
  );
}

const dir = await mkdtemp(path.join(tmpdir(), 'mmif-allava-bench-'));
try {
  await mkdir(path.join(dir, 'allava_laion'));
  const file = path.join(dir, FILE);
  await writeArray(file);
  console.log(`wrote ${RECORDS} records, ${((await stat(file)).size / MB).toFixed(0)} MB`);

  await measure('parser only  ', async () => {
    let n = 0;
    for await (const item of jsonArrayElements(createReadStream(file))) if ('value' in item) n++;
    return n;
  });
  await measure('ALLaVA reader', async () => {
    const config = sourceSchema.parse({ type: 'allava', uri: dir, files: [FILE] });
    let n = 0;
    for await (const segment of openSource(config, 0, {}).segments()) n += segment.sampleIds.length;
    return n;
  });
} finally {
  await rm(dir, { recursive: true, force: true });
}
