// Dev-only: agreement of the TypeScript Punkt port (verification/sentences.ts) with the REAL
// `nltk.sent_tokenize` on every IFEval corpus text (the corpora's responses and prompts plus a few edge
// cases), each split raw, after the reference's clean_text, and per paragraph as the reference verifier
// feeds nltk. Set up once: `bash tools/install.sh dev` (nltk into tools/venv); the punkt_tab export is
// run here when missing (tools/punkt/export_english.py, which also regenerates english.json).
// Run:   npx tsx bench/punktAgreement.ts [--max-diffs N] [--fuzz N --seed S]
//        --write-golden rewrites test/fixtures/punkt-golden.jsonl; --compare BEHAVIOUR=PYTHON (repeatable)
//        also compares a PunktBehaviour with an older NLTK, e.g. --compare nltk-3.10.1=/tmp/nltk391/bin/python
//        (a scratch venv with pip install nltk==3.9.1). Other options: --corpora, --nltk-data, --python.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { englishPunkt, sentTokenize } from '../verification/sentences.js';
import { DEFAULT_PUNKT_BEHAVIOUR, PUNKT_BEHAVIOURS, type PunktBehaviour } from '../verification/punkt/tokenizer.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
}
const corporaDir = resolve(ROOT, arg('--corpora') ?? '../shared/corpora');
const nltkData = resolve(ROOT, arg('--nltk-data') ?? 'tools/venv/nltk_data');
const python = resolve(ROOT, arg('--python') ?? 'tools/venv/bin/python');
const maxDiffs = Number(arg('--max-diffs') ?? Infinity);
const writeGolden = process.argv.includes('--write-golden');
const GOLDEN_FUZZ = 30; // seeded random texts that also go into the golden file
const fuzzCount = Math.max(Number(arg('--fuzz') ?? 0), writeGolden ? GOLDEN_FUZZ : 0);
const goldenPath = join(ROOT, 'test/fixtures/punkt-golden.jsonl');

// Python str.isspace() characters: str.strip() and the reference's re `\s`.
const PY_WS = '\\t\\n\\v\\f\\r\\x1c-\\x1f \\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000';
const PY_STRIP_RE = new RegExp(`^[${PY_WS}]+|[${PY_WS}]+$`, 'g');
const PARA_SPLIT_RE = new RegExp(`\\n[${PY_WS}]*\\n`);
const pyStrip = (s: string): string => s.replace(PY_STRIP_RE, '');

/** The reference's clean_text: strip every line, join with "\n", strip the result. */
function cleanText(t: string): string {
  return pyStrip(t.split('\n').map(pyStrip).join('\n'));
}

/** The reference's paragraphs: re.split(r"\n\s*\n", clean_text(t)), pieces with non-whitespace. */
function paragraphs(t: string): string[] {
  return cleanText(t)
    .split(PARA_SPLIT_RE)
    .filter((p) => pyStrip(p) !== '');
}

interface Item {
  id: string;
  kind: 'raw' | 'clean' | 'paragraph' | 'synthetic' | 'fuzz';
  text: string;
}

function readJsonl(file: string): Record<string, unknown>[] {
  return readFileSync(join(corporaDir, file), 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

/** Hand-written edge cases (also end up in the golden file). */
const SYNTHETIC: string[] = [
  'Mr. Smith went to Washington. He said hi.',
  'Punkt knows that the periods in Mr. Smith and Johann S. Bach\ndo not mark sentence boundaries.  And sometimes sentences\ncan start with non-capitalized words.  i is a good variable\nname.',
  '(How does it deal with this parenthesis?)  "It should be part of the\nprevious sentence." "(And the same with this one.)" (\'And this one!\')\n"(\'(And (this)) \'?)" [(and this. )]',
  'This is e.g. a test. This is i.e. another. See U.S. policy. Dr. Who arrived at 5 p.m. yesterday.',
  'The price rose 3.5% to $1,234.56. Then it fell. Version 2.0.1 is out.',
  'Wait... what? Really?! Yes!!! OK.',
  'He left . . . and came back. Then . . . nothing.',
  '“Hello.” “World!” ‘Quote.’ «Guillemet.» Next one.',
  'Items:\n1. First item.\n2. Second item.\n3. Third.',
  'See J. R. R. Tolkien. He wrote books. A. B. Smith is here.',
  'It costs 5 dollars. 10 people came. In 2023. The year ended.',
  'Emoji test 😀. Next sentence 🚀! And another? Yes.',
  'Café au lait. Élan vital. Über alles. Ωmega end. Ça va.',
  'Line one.\r\nLine two.\r\n\r\nLine three.',
  'Tabs\tand.\tmore\ttabs. Done.',
  'Zero\u00a0width\u200b and nbsp. Next\u00a0Sentence. Done.',
  'BOM\ufeff. Next. NEL\u0085Here. Then.',
  'Separators\u2028 here. And\u2029 there. End.',
  'Control\x1c chars. And\x1f more.\x1c',
  '\x1c\nLeading control line.\n\x1c\nAnother.',
  '(Sent1.) Sent2. [Sent3.] {Sent4.} Sent5.',
  'He said -- and I quote -- "nothing." Then left.--Next.',
  'Ends with abbreviation etc. And more etc.',
  'Jan. 5 was cold. Feb. was colder. The U.S.A. is big. The U.K. too.',
  'No. 5 is here. Vol. 3. Fig. 2 shows it. Sec. 4.',
  'a.m. and p.m. are times. The meeting is at 9 a.m. Tomorrow.',
  'Prof. Jones and Sen. Smith met Gen. Lee. St. Louis is a city.',
  'She scored 9.5. Her rank was 1. The end.',
  'What?No space.Another!Here',
  'Quote at end." Next sentence.',
  'Nested (parens. like this.) here.',
  '*Bold.* _Italic._ `Code.` Done.',
  '- item one.\n- item two.\n* item three.',
  'Trailing spaces.   \n\n   ',
  '',
  '   ',
  '.',
  '...',
  '!?',
  'A. B. C.',
  'x. Y. z.',
  'The U.S. The U.S.S.R. The E.U. And N.Y. City.',
  'I. Introduction. II. Methods. III. Results.',
  'ΟΔΟΣ. Σ. ΑΣ. Next.',
  'İstanbul. Next.',
  'Ph.D. students. M.B.A. degree. The end.',
  'ellipsis…  Unicode ellipsis… Next.',
  'Mixed.\'quote\' here. And."double" there.',
  // where NLTK releases differ (see PunktBehaviour)
  'See note ². the value is small. Next sentence.',
  'A mark \u0301. the next word. Done.',
  'Field\u001d. Next one.\u001cAnd more.\u001f Then the end.',
  'He said “Stop.” Then he left. She said «Non.» Fin. ‘Quoted.’ Next.',
];

function buildItems(): Item[] {
  const items: Item[] = [];
  const add = (prefix: string, texts: string[]): void => {
    texts.forEach((t, i) => {
      const id = `${prefix}#${i}`;
      items.push({ id, kind: 'raw', text: t });
      const clean = cleanText(t);
      if (clean !== t) items.push({ id: `${id}/clean`, kind: 'clean', text: clean });
      paragraphs(t).forEach((p, j) => items.push({ id: `${id}/p${j}`, kind: 'paragraph', text: p }));
    });
  };
  add(
    'gpt4',
    readJsonl('ifeval_gpt4_responses.jsonl').map((r) => String(r.response ?? '')),
  );
  add(
    'bison',
    readJsonl('ifeval_text_bison_responses.jsonl').map((r) => String(r.response ?? '')),
  );
  add(
    'prompt',
    readJsonl('ifeval_input_data.jsonl').map((r) => String(r.prompt ?? '')),
  );
  SYNTHETIC.forEach((t, i) => items.push({ id: `synthetic#${i}`, kind: 'synthetic', text: t }));
  fuzzTexts(fuzzCount).forEach((t, i) => items.push({ id: `fuzz#${i}`, kind: 'fuzz', text: t }));
  return items;
}

/** Random texts from tokens and characters that exercise every branch of the algorithm. */
function fuzzTexts(n: number): string[] {
  let seed = Number(arg('--seed') ?? 20240607);
  const rnd = (k: number): number => {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
    return (seed >>> 8) % k;
  };
  const words = [
    'The',
    'the',
    'He',
    'he',
    'However',
    'I',
    'i',
    'In',
    'in',
    'It',
    'Mr',
    'mr',
    'Dr',
    'U.S',
    'u.s',
    'e.g',
    'i.e',
    'etc',
    'vs',
    'Inc',
    'Co',
    'St',
    'J',
    'S',
    'a',
    'A',
    'x',
    'No',
    'no',
    'Jan',
    'Smith',
    'smith',
    'Washington',
    'said',
    'Bach',
    'Edelman',
    'b',
    '5',
    '10',
    '1,000',
    '3.14',
    '-2',
    '.5',
    '2023',
    '1st',
    'abc-def',
    'ex-Dr',
    'Ph.D',
    'U.S.A',
    'New',
    'new',
    'York',
    'Ωmega',
    'über',
    'Über',
    'İstanbul',
    'ΟΔΟΣ',
    'ǅemal',
    '_x',
    '😀',
    '🚀ok',
    '日本語',
    'café',
    'CAFÉ',
    "don't",
    "'tis",
    "O'Neil",
    'x_y',
    '٣',
    '٣.٤',
    'e\u0301',
    'É',
    'pre-Inc',
    'sales',
    'Sales',
    '##number##',
    'Aron',
    '1.',
    'v',
    'V',
  ];
  const punct = [
    '.',
    '.',
    '.',
    '?',
    '!',
    '...',
    '..',
    '. . .',
    '…',
    ',',
    ';',
    ':',
    '-',
    '--',
    '—',
    '"',
    "'",
    '`',
    '“',
    '”',
    '‘',
    '’',
    '«',
    '»',
    '(',
    ')',
    '[',
    ']',
    '{',
    '}',
    '*',
    '@',
    '&',
    '#',
    '%',
    '$',
    '/',
  ];
  const spaces = [' ', ' ', ' ', ' ', '  ', '\n', '\n\n', '\t', '\r\n', '\x1c', '\x85', '\u00a0', '\ufeff', '\u2028', '\u2003', '', '', '\n \n', ' \x1c\n'];
  const out: string[] = [];
  for (let i = 0; i < n; i++) {
    const parts: string[] = [];
    const len = 1 + rnd(30);
    for (let j = 0; j < len; j++) {
      const r = rnd(10);
      if (r < 5) parts.push(words[rnd(words.length)]!);
      else if (r < 8) parts.push(punct[rnd(punct.length)]!);
      else parts.push(spaces[rnd(spaces.length)]!);
      if (rnd(3) === 0) parts.push(spaces[rnd(spaces.length)]!);
    }
    out.push(parts.join(''));
  }
  return out;
}

/** Writes the punkt_tab directory real nltk loads, if it is not there yet. */
function ensurePunktTab(): void {
  if (existsSync(join(nltkData, 'tokenizers/punkt_tab/english/ortho_context.tab'))) return;
  const mainPython = resolve(ROOT, 'tools/venv/bin/python');
  const r = spawnSync(mainPython, [join(ROOT, 'tools/punkt/export_english.py'), '--no-json', '--nltk-data', nltkData], {
    encoding: 'utf8',
  });
  if (r.status !== 0) throw new Error(`export_english.py failed (see the set-up notes at the top of this file):\n${r.stderr}`);
}

function runNltk(python: string, items: Item[]): { version: string; out: Map<string, string[]> } {
  const script = join(ROOT, 'tools/punkt/nltk_sentences.py');
  if (!existsSync(python)) throw new Error(`no python at ${python}: see the set-up notes at the top of this file`);
  const v = spawnSync(python, ['-c', 'import nltk; print(nltk.__version__)'], { encoding: 'utf8' });
  if (v.status !== 0) throw new Error(`${python} has no nltk:\n${v.stderr}`);
  const input = items.map((it) => JSON.stringify({ id: it.id, text: it.text })).join('\n') + '\n';
  const r = spawnSync(python, [script, '--nltk-data', nltkData], {
    input,
    encoding: 'utf8',
    maxBuffer: 1 << 30,
  });
  if (r.status !== 0) throw new Error(`nltk_sentences.py failed (${r.status}):\n${r.stderr}`);
  const out = new Map<string, string[]>();
  for (const line of r.stdout.split('\n')) {
    if (!line.trim()) continue;
    const rec = JSON.parse(line) as { id: string; sentences: string[] };
    out.set(rec.id, rec.sentences);
  }
  return { version: v.stdout.trim(), out };
}

const same = (a: string[], b: string[]): boolean => a.length === b.length && a.every((s, i) => s === b[i]);

/** Compares the port under `behaviour` with the nltk of `python`; returns nltk's answers. */
function compare(items: Item[], behaviour: PunktBehaviour, python: string): { nltk: Map<string, string[]>; diffs: number } {
  const tNltk = Date.now();
  const { version, out: nltk } = runNltk(python, items);
  const nltkMs = Date.now() - tNltk;

  englishPunkt(behaviour); // load the parameters outside the timed loop
  const t0 = performance.now();
  const ours = items.map((it) => sentTokenize(it.text, behaviour));
  const tsMs = performance.now() - t0;
  const chars = items.reduce((n, it) => n + it.text.length, 0);

  const kinds = ['raw', 'clean', 'paragraph', 'synthetic', 'fuzz'] as const;
  const stats = new Map(kinds.map((k) => [k, { n: 0, lists: 0, counts: 0 }]));
  const diffs: { item: Item; ts: string[]; py: string[] }[] = [];
  items.forEach((it, i) => {
    const ts = ours[i]!;
    const py = nltk.get(it.id);
    if (!py) throw new Error(`nltk gave no answer for ${it.id}`);
    const s = stats.get(it.kind)!;
    s.n++;
    if (same(ts, py)) s.lists++;
    else diffs.push({ item: it, ts, py });
    if (ts.length === py.length) s.counts++;
  });

  const pct = (a: number, n: number): string => (n ? ((100 * a) / n).toFixed(2) : 'n/a');
  console.log(`\nPunkt agreement: TypeScript port (${behaviour}) vs nltk ${version} (${python}), corpora ${corporaDir}`);
  console.log('kind        texts  identical-lists  identical-counts');
  for (const k of kinds) {
    const s = stats.get(k)!;
    if (!s.n) continue;
    console.log(`${k.padEnd(10)} ${String(s.n).padStart(6)}  ${pct(s.lists, s.n).padStart(14)}%  ${pct(s.counts, s.n).padStart(15)}%`);
  }
  console.log(`timing: TS port ${tsMs.toFixed(0)} ms for ${items.length} texts (${(chars / 1e6).toFixed(2)} M chars); ` + `nltk subprocess ${nltkMs} ms`);
  console.log(`disagreements: ${diffs.length}`);
  for (const d of diffs.slice(0, maxDiffs)) {
    console.log(`--- ${d.item.id} (${d.item.kind}) ts=${d.ts.length} nltk=${d.py.length}`);
    console.log(`text: ${JSON.stringify(d.item.text)}`);
    console.log(`ts:   ${JSON.stringify(d.ts)}`);
    console.log(`nltk: ${JSON.stringify(d.py)}`);
  }
  return { nltk, diffs: diffs.length };
}

function main(): void {
  const items = buildItems();
  ensurePunktTab();
  const main = compare(items, DEFAULT_PUNKT_BEHAVIOUR, python);
  let failed = main.diffs > 0;
  // Older NLTK releases: --compare nltk-3.10.1=/path/to/venv-with-nltk-3.9.1/bin/python (repeatable).
  const variants = new Map<PunktBehaviour, Map<string, string[]>>();
  process.argv.forEach((a, i) => {
    if (a !== '--compare') return;
    const spec = process.argv[i + 1] ?? '';
    const eq = spec.indexOf('=');
    const behaviour = spec.slice(0, eq) as PunktBehaviour;
    if (eq < 0 || !PUNKT_BEHAVIOURS.includes(behaviour)) {
      throw new Error(`--compare BEHAVIOUR=PYTHON, BEHAVIOUR one of ${PUNKT_BEHAVIOURS.join(', ')}`);
    }
    const r = compare(items, behaviour, resolve(ROOT, spec.slice(eq + 1)));
    failed ||= r.diffs > 0;
    variants.set(behaviour, r.nltk);
  });

  if (writeGolden) {
    // Texts on which an older NLTK splits differently always go in, with that NLTK's answer.
    const differing = new Set<string>();
    for (const v of variants.values()) {
      for (const it of items) if (!same(v.get(it.id)!, main.nltk.get(it.id)!)) differing.add(it.id);
    }
    const golden = selectGolden(items, differing);
    const lines = golden.map((it) => {
      const sentences = main.nltk.get(it.id)!;
      const byBehaviour: Record<string, string[]> = {};
      for (const [b, v] of variants) if (!same(v.get(it.id)!, sentences)) byBehaviour[b] = v.get(it.id)!;
      const rec: Record<string, unknown> = { id: it.id, text: it.text, sentences };
      if (Object.keys(byBehaviour).length) rec.byBehaviour = byBehaviour;
      return JSON.stringify(rec);
    });
    const header = JSON.stringify({
      comment:
        'Generated by `npx tsx bench/punktAgreement.ts --write-golden` with the real nltk.sent_tokenize: ' +
        `sentences = nltk ${DEFAULT_PUNKT_BEHAVIOUR.slice(5)}; byBehaviour = an older NLTK's answer where it differs.`,
      compared: [DEFAULT_PUNKT_BEHAVIOUR, ...variants.keys()],
    });
    writeFileSync(goldenPath, [header, ...lines].join('\n') + '\n');
    console.log(`wrote ${goldenPath}: ${golden.length} texts`);
  }
  if (failed) process.exitCode = 1;
}

/** ~300 diverse, tricky texts for the committed golden file (deterministic). */
function selectGolden(items: Item[], always: ReadonlySet<string>): Item[] {
  const picked = new Map<string, Item>();
  for (const it of items) if (always.has(it.id)) picked.set(it.id, it);
  const pick = (pred: (t: string) => boolean, n: number, kinds: Item['kind'][] = ['paragraph']): void => {
    let k = 0;
    const pool = items
      .filter((it) => kinds.includes(it.kind) && !picked.has(it.id) && it.text.length <= 2500 && pred(it.text))
      .sort((a, b) => a.text.length - b.text.length || (a.id < b.id ? -1 : 1));
    // spread over the pool instead of taking only the shortest texts
    const step = Math.max(1, Math.floor(pool.length / n));
    for (let i = 0; i < pool.length && k < n; i += step, k++) picked.set(pool[i]!.id, pool[i]!);
  };
  const p = (re: RegExp) => (t: string) => re.test(t);
  for (const it of items) if (it.kind === 'synthetic') picked.set(it.id, it);
  for (const it of items.filter((x) => x.kind === 'fuzz').slice(0, GOLDEN_FUZZ)) picked.set(it.id, it);
  pick(p(/\b(?:e\.g|i\.e|etc|vs|approx|cf)\./i), 25);
  pick(p(/\b(?:U\.S|U\.K|Dr|Mr|Mrs|Ms|St|Jr|Sr|Inc|Ltd|Co|Corp|Prof|Gen|Jan|Feb|Aug|Sept|Oct|Nov|Dec|No|Vol|Fig)\./), 30);
  pick(p(/(?:^|[\s(])\p{Lu}\.\s/u), 20); // initials
  pick(p(/\d\.\d/), 20); // decimals, versions
  pick(p(/(?:^|\s)\d+\.\s/), 20); // numbered lists, ordinals
  pick(p(/\.\.\.|…|\. \. \./), 20); // ellipses
  pick(p(/[.?!]["'\u2019\u201d)\]}]/), 25); // closing quotes/brackets after the end
  pick(p(/[.?!]\S/), 15); // no space after the end
  pick(p(/\n/), 20); // newlines inside a paragraph
  pick(p(/\p{Extended_Pictographic}/u), 10); // emoji
  pick(p(/[^\x00-\x7f]/), 20); // non-ASCII
  pick(p(/[?!]/), 10);
  pick(p(/--|—/), 10);
  pick(() => true, 15, ['raw']); // whole texts
  pick(() => true, 10, ['clean']);
  pick(() => true, 15);
  return [...picked.values()];
}

main();
