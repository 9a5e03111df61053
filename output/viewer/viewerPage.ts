/**
 * `mmif view`'s page: a static HTML page showing a build's samples (SFT records, DPO pairs, chats and
 * turn-level pairs: docs/outputs.md) with their images, and the data it loads lazily. At 46k records a
 * page holding every article is too big to open, so the page holds no record: it loads
 * `<page>-data/index.js` (each record's kind, source and type:verdict tokens, interned) and renders one
 * page of matches at a time from `chunk-NNNNN.js` files of VIEWER_CHUNK pre-rendered articles. The
 * data files are scripts calling `mmifViewer.index(...)` / `mmifViewer.chunk(n, ...)`, not JSON: a page
 * opened from disk (file://) may add a <script src>, but Chromium refuses it fetch() of a local file.
 * Pure: records in, files out.
 */
import type { Verdict } from '../../domain/verdict.js';
import type { DpoRecord, InstructRecord, RejectRecord } from '../contracts/records.js';
import type { ChatPairSharegptRow, ChatSharegptRow } from '../formats/chatFormats.js';
import { esc } from './html.js';

/**
 * Pre-rendered articles per data file (about 3 KB each). Small, so that a rare filter, whose first
 * page of matches may take one article from each of 50 files, still loads a few MB; large enough
 * that 46k records make 460 files.
 */
export const VIEWER_CHUNK = 100;
/** Articles rendered at once. */
const PAGE_SIZE = 50;
const KINDS = ['sft', 'dpo', 'chat', 'chat-dpo', 'rejected'] as const;
type Kind = (typeof KINDS)[number];

/** A file of the viewer, at `path` relative to the page's folder. */
export interface ViewerFile {
  path: string;
  body: string;
  contentType: string;
}

/** The folder of a page's data files, beside it: `viewer.html` loads `viewer-data/`. */
const viewerDataDir = (pageName: string): string => `${pageName.replace(/\.html?$/, '')}-data`;

/** Values numbered in the order first seen, so the index holds small integers. */
class Interner {
  readonly values: string[] = [];
  private readonly numbers = new Map<string, number>();
  number(value: string): number {
    let n = this.numbers.get(value);
    if (n === undefined) {
      n = this.values.push(value) - 1;
      this.numbers.set(value, n);
    }
    return n;
  }
}

export interface ViewerPage {
  /** The page's file name (its data folder is named after it). */
  pageName: string;
  buildId: string;
  /** The `src` of a record's image as the page will reach it (relative to the page, or a served path). */
  imageSrc: (imagePath: string) => string;
}

/**
 * Builds the viewer record by record: each `add` returns a data file when a chunk fills, `finish`
 * the last chunk, the index and the page. Only the index and one chunk are held, whatever the size.
 */
export class ViewerWriter {
  readonly counts: Record<Kind, number> = { sft: 0, dpo: 0, chat: 0, 'chat-dpo': 0, rejected: 0 };
  private readonly dataDir: string;
  private readonly sources = new Interner();
  private readonly tokens = new Interner();
  private readonly types = new Set<string>();
  private readonly records: Array<[number, number, number[]]> = [];
  private chunk: string[] = [];

  constructor(private readonly page: ViewerPage) {
    this.dataDir = viewerDataDir(page.pageName);
  }

  addSft(r: InstructRecord): ViewerFile | undefined {
    return this.add(
      'sft',
      r.source,
      verdictTokens(r.verdicts),
      r.constraints.map((c) => c.type),
      sftArticle(r, this.page.imageSrc),
    );
  }

  addPair(r: DpoRecord): ViewerFile | undefined {
    return this.add(
      'dpo',
      r.source,
      verdictTokens(r.verdicts),
      r.constraints.map((c) => c.type),
      pairArticle(r, this.page.imageSrc),
    );
  }

  addChat(row: ChatSharegptRow): ViewerFile | undefined {
    const meta = JSON.parse(row.metadata) as ChatMeta;
    const verdicts = meta.turns.flatMap((t) => t.verdicts);
    return this.add(
      'chat',
      meta.source,
      verdictTokens(verdicts),
      meta.instructions.map((x) => x.type),
      chatArticle(row, meta, this.page.imageSrc),
    );
  }

  addChatPair(row: ChatPairSharegptRow): ViewerFile | undefined {
    const meta = JSON.parse(row.metadata) as ChatPairMeta;
    return this.add('chat-dpo', meta.source, verdictTokens(meta.chosen_verdicts), [], chatPairArticle(row, meta, this.page.imageSrc));
  }

  /**
   * A rejected sample or discarded pair (rejects/shard-*.jsonl), with what its line says it passed:
   * its instruction, constraints and staged image, when it got that far.
   */
  addRejected(r: RejectRecord): ViewerFile | undefined {
    const types = [...(r.constraints ?? []).map((c) => c.type), ...(r.verdicts ?? []).map((v) => v.type)];
    return this.add('rejected', r.source, verdictTokens(r.verdicts ?? []), types, rejectedArticle(r, this.page.imageSrc));
  }

  /** The last chunk, the index and the page. `omitted`: records left out by a display limit, said on the page. */
  finish(options: FinishOptions): ViewerFile[] {
    const files: ViewerFile[] = [];
    if (this.chunk.length > 0) files.push(this.flush());
    const index = { chunkSize: VIEWER_CHUNK, pageSize: PAGE_SIZE, kinds: KINDS, sources: this.sources.values, tokens: this.tokens.values, records: this.records };
    files.push(script(`${this.dataDir}/index.js`, `mmifViewer.index(${JSON.stringify(index)});\n`));
    files.push({ path: this.page.pageName, body: this.pageHtml(options), contentType: 'text/html' });
    return files;
  }

  private add(kind: Kind, source: string, tokens: string[], types: string[], article: string): ViewerFile | undefined {
    this.counts[kind] += 1;
    for (const t of types) this.types.add(t);
    this.records.push([KINDS.indexOf(kind), this.sources.number(source), tokens.map((t) => this.tokens.number(t))]);
    this.chunk.push(article);
    return this.chunk.length === VIEWER_CHUNK ? this.flush() : undefined;
  }

  private flush(): ViewerFile {
    const n = Math.floor((this.records.length - 1) / VIEWER_CHUNK);
    const file = script(`${this.dataDir}/${chunkName(n)}`, `mmifViewer.chunk(${n},${JSON.stringify(this.chunk)});\n`);
    this.chunk = [];
    return file;
  }

  private pageHtml(options: FinishOptions): string {
    const { counts } = this;
    const omitted =
      options.omitted && options.omitted.instruct + options.omitted.dpo + (options.omitted.rejected ?? 0) > 0
        ? ` (${options.omitted.instruct} SFT records, ${options.omitted.dpo} pairs and ${options.omitted.rejected ?? 0} rejections beyond the display limit are not shown)`
        : '';
    const chats = counts.chat + counts['chat-dpo'] > 0;
    const shown = `${chats ? `${counts.chat} chats, ${counts['chat-dpo']} turn-level pairs` : `${counts.sft} SFT records, ${counts.dpo} DPO pairs`}, ${counts.rejected} rejected samples and pairs`;
    return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>mmif view: ${esc(this.page.buildId)}</title>
<style>${STYLE}</style>
</head>
<body>
<h1>${esc(this.page.buildId)}</h1>
${options.simulated ? '<p class="simulated">SIMULATED DATA: model replies came from the mmif simulator, not a real model.</p>' : ''}
${options.summary ?? ''}
<header>
<p>${shown}${esc(omitted)}. <span id="shown"></span></p>
<form id="filters">
<label>kind <select id="f-kind"><option value="">all</option><option value="sft">SFT records</option><option value="dpo">DPO pairs</option>${chats ? '<option value="chat">chats</option><option value="chat-dpo">turn-level pairs</option>' : ''}<option value="rejected">rejected samples and pairs</option></select></label>
<label>source <select id="f-source"><option value="">all</option>${distinct(this.sources.values).map(option).join('')}</select></label>
<label>constraint type <select id="f-type"><option value="">all</option>${distinct([...this.types])
      .map(option)
      .join('')}</select></label>
<label>verdict <select id="f-verdict"><option value="">any</option><option value="passed">passed</option><option value="failed">failed</option></select></label>
<span id="pager"><button type="button" id="p-prev">&larr; previous</button> <span id="p-at"></span> <button type="button" id="p-next">next &rarr;</button></span>
</form>
</header>
<noscript><p>This page loads its records with script (from ${esc(this.dataDir)}/ beside it).</p></noscript>
<main data-state="loading"></main>
<script>const DATA = ${JSON.stringify(`${this.dataDir.split('/').map(encodeURIComponent).join('/')}/`)};${SCRIPT}</script>
</body>
</html>
`;
  }
}

export interface FinishOptions {
  simulated: boolean;
  /** Records left out by a display limit, by kind. */
  omitted?: { instruct: number; dpo: number; rejected?: number };
  /** The summary panel's HTML (output/reports/viewerSummary.ts), shown above the filters. */
  summary?: string;
}

const chunkName = (n: number) => `chunk-${String(n).padStart(5, '0')}.js`;
const script = (path: string, body: string): ViewerFile => ({ path, body, contentType: 'text/javascript' });

/** `type:passed` / `type:failed` for every constraint verdict (the chosen answer's in a pair): the type and verdict filters match on one. */
const verdictTokens = (verdicts: readonly Verdict[]): string[] => distinct(verdicts.map((v) => `${v.type}:${v.passed ? 'passed' : 'failed'}`));

/** An article's kind, source and verdict tokens (what the index filters on), as attributes too. */
const sampleAttributes = (kind: Kind, id: string, source: string, verdicts: readonly Verdict[]) =>
  `class="sample ${kind}" data-kind="${kind}" data-source="${esc(source)}" data-verdicts="${esc(verdictTokens(verdicts).join(' '))}" id="${esc(id)}"`;

type ImageSrc = ViewerPage['imageSrc'];

function header(r: InstructRecord | DpoRecord, imageSrc: ImageSrc, label: string): string {
  return `<img src="${esc(imageSrc(r.image_path))}" alt="image of ${esc(r.id)}" loading="lazy">
<div class="meta"><span class="badge">${label}</span> <code>${esc(r.id)}</code> · ${esc(r.source)} <code>${esc(r.source_id)}</code> · pass rate ${r.pass_rate.toFixed(2)}</div>
<h2>${esc(r.instruction)}</h2>`;
}

function sftArticle(r: InstructRecord, imageSrc: ImageSrc): string {
  const rows = r.constraints.map((c, i) => {
    const v = r.verdicts.find((x) => x.index === i);
    return `<tr><td>${i + 1}</td><td><code>${esc(c.type)}</code></td><td>${esc(c.value)}</td><td>${esc(c.method)}</td>${verdictCell(v)}</tr>`;
  });
  return `<article ${sampleAttributes('sft', r.id, r.source, r.verdicts)}>
${header(r, imageSrc, 'SFT')}
<table class="constraints"><thead><tr><th>#</th><th>type</th><th>constraint</th><th>method</th><th>verdict</th></tr></thead><tbody>${rows.join('')}</tbody></table>
<h3>Answer <small>(${r.answer_attempts} attempt${r.answer_attempts === 1 ? '' : 's'}, ${esc(r.models.answer)})</small></h3>
<pre>${esc(r.answer)}</pre>
</article>`;
}

function pairArticle(r: DpoRecord, imageSrc: ImageSrc): string {
  const dropped = new Set(r.dropped_constraints.map((c) => `${c.type}\u0000${c.value}`));
  const rows = r.constraints.map((c, i) => {
    const isDropped = dropped.has(`${c.type}\u0000${c.value}`);
    const chosen = r.verdicts.find((x) => x.index === i);
    const rejected = r.rejected_verdicts.find((x) => x.index === i);
    return `<tr${isDropped ? ' class="dropped"' : ''}><td>${i + 1}</td><td><code>${esc(c.type)}</code>${isDropped ? ' <span class="badge drop">dropped</span>' : ''}</td><td>${esc(c.value)}</td><td>${esc(c.method)}</td>${verdictCell(chosen)}${verdictCell(rejected)}</tr>`;
  });
  return `<article ${sampleAttributes('dpo', r.id, r.source, r.verdicts)}>
${header(r, imageSrc, `DPO · ${esc(r.strategy)}`)}
<table class="constraints"><thead><tr><th>#</th><th>type</th><th>constraint</th><th>method</th><th>chosen</th><th>rejected</th></tr></thead><tbody>${rows.join('')}</tbody></table>
<div class="pair">
<section class="chosen"><h3>Chosen <small>(${esc(r.chosen_model)})</small></h3><pre>${esc(r.chosen)}</pre></section>
<section class="rejected"><h3>Rejected <small>(${esc(r.rejected_model)}, ${esc(r.strategy)})</small></h3><pre>${esc(r.rejected)}</pre></section>
</div>
</article>`;
}

function rejectedArticle(r: RejectRecord, imageSrc: ImageSrc): string {
  const label = r.kind === 'pair' ? `discarded pair${r.strategy ? ` · ${esc(r.strategy)}` : ''}` : 'rejected sample';
  const atStake = new Set(r.at_stake ?? []);
  const indices = [...new Set([...(r.constraints ?? []).map((_, i) => i), ...(r.verdicts ?? []).map((v) => v.index)])].sort((a, b) => a - b);
  const rows = indices.map((i) => {
    const c = r.constraints?.[i];
    const v = r.verdicts?.find((x) => x.index === i);
    const stake = atStake.has(i) ? ' <span class="badge drop">at stake</span>' : '';
    return `<tr><td>${i + 1}</td><td><code>${esc(c?.type ?? v?.type ?? '')}</code>${stake}</td><td>${esc(c?.value ?? '')}</td><td>${esc(c?.method ?? v?.method ?? '')}</td>${verdictCell(v)}</tr>`;
  });
  const call = r.model_call
    ? `<p class="model-call">model call: ${esc(r.model_call.endpoint)} (model ${esc(r.model_call.model)}), HTTP ${r.model_call.status}${r.model_call.tries ? `, ${r.model_call.tries} tries` : ''}: <code>${esc(r.model_call.excerpt)}</code></p>`
    : '';
  const ruled = r.pair_rule_rejections
    ? `<p>rejected answers refused by pair rule: ${esc(
        Object.entries(r.pair_rule_rejections)
          .map(([rule, n]) => `${rule} ${n}`)
          .join(', '),
      )}</p>`
    : '';
  return `<article ${sampleAttributes('rejected', `rejected-${r.kind}-${r.id}`, r.source, r.verdicts ?? [])} data-reason="${esc(r.reason)}">
${r.staged_image_path ? `<img src="${esc(imageSrc(r.staged_image_path))}" alt="image of ${esc(r.id)}" loading="lazy">` : '<div class="no-image">no image kept</div>'}
<div class="meta"><span class="badge drop">${label}</span> <code>${esc(r.id)}</code> · ${esc(r.source)} <code>${esc(r.source_id)}</code> · at stage <code>${esc(r.stage)}</code></div>
<p class="reason"><strong>reason:</strong> <code>${esc(r.reason)}</code></p>
${r.instruction ? `<h2>${esc(r.instruction)}</h2>` : ''}
${rows.length ? `<table class="constraints"><thead><tr><th>#</th><th>type</th><th>constraint</th><th>method</th><th>${r.kind === 'pair' ? 'rejected answer' : 'last answer'}</th></tr></thead><tbody>${rows.join('')}</tbody></table>` : ''}
${call}${ruled}
</article>`;
}

interface ChatMeta {
  source: string;
  source_id: string;
  instructions: Array<{ turn: number; type: string; value: string }>;
  turns: Array<{ turn: number; instruction: string | null; attempts: number; verdicts: Verdict[]; pif: number }>;
}
interface ChatPairMeta {
  source: string;
  source_id: string;
  turn: number;
  forgotten_turn: number;
  forgotten_instruction: { type: string; value: string };
  chosen_verdicts: Verdict[];
  rejected_verdicts: Verdict[];
}

const plainTurn = (value: string) => value.replace(/^<image>\n/, '');

function chatArticle(row: ChatSharegptRow, meta: ChatMeta, imageSrc: ImageSrc): string {
  const turns = meta.turns.map((t, i) => {
    const cells = t.verdicts.map((v) => `<tr><td><code>${esc(v.type)}</code></td>${verdictCell(v)}</tr>`).join('');
    return `<section class="turn"><h3>Turn ${t.turn} <small>(PIF ${t.pif.toFixed(2)}, ${t.attempts} attempt${t.attempts === 1 ? '' : 's'})</small></h3>
${t.instruction ? `<p class="instruction"><span class="badge">new instruction</span> ${esc(t.instruction)}</p>` : ''}
<p class="question">${esc(plainTurn(row.conversations[2 * i]!.value).slice(t.instruction ? t.instruction.length + 2 : 0))}</p>
<pre>${esc(row.conversations[2 * i + 1]!.value)}</pre>
${cells ? `<table class="constraints"><thead><tr><th>instruction in force</th><th>verdict</th></tr></thead><tbody>${cells}</tbody></table>` : ''}</section>`;
  });
  return `<article ${sampleAttributes(
    'chat',
    row.id,
    meta.source,
    meta.turns.flatMap((t) => t.verdicts),
  )}>
<img src="${esc(imageSrc(row.images[0]))}" alt="image of ${esc(row.id)}" loading="lazy">
<div class="meta"><span class="badge">chat</span> <code>${esc(row.id)}</code> · ${esc(meta.source)} <code>${esc(meta.source_id)}</code> · ${meta.turns.length} turns, ${meta.instructions.length} instructions</div>
<div class="turns">${turns.join('\n')}</div>
</article>`;
}

function chatPairArticle(row: ChatPairSharegptRow, meta: ChatPairMeta, imageSrc: ImageSrc): string {
  return `<article ${sampleAttributes('chat-dpo', row.id, meta.source, meta.chosen_verdicts)}>
<img src="${esc(imageSrc(row.images[0]))}" alt="image of ${esc(row.id)}" loading="lazy">
<div class="meta"><span class="badge">turn-level pair</span> <code>${esc(row.id)}</code> · turn ${meta.turn} · ${esc(meta.source)} <code>${esc(meta.source_id)}</code></div>
<h2>${esc(plainTurn(row.conversations.at(-1)!.value))}</h2>
<p><span class="badge drop">left out</span> turn ${meta.forgotten_turn}'s instruction <code>${esc(meta.forgotten_instruction.type)}</code>: ${esc(meta.forgotten_instruction.value)}</p>
<div class="pair">
<section class="chosen"><h3>Chosen</h3><pre>${esc(row.chosen.value)}</pre></section>
<section class="rejected"><h3>Rejected <small>(fails: ${esc(
    meta.rejected_verdicts
      .filter((v) => !v.passed)
      .map((v) => v.type)
      .join(', '),
  )})</small></h3><pre>${esc(row.rejected.value)}</pre></section>
</div>
</article>`;
}

/** A verdict cell: pass/fail with the verifier's detail (and the judge's second opinion on a sampled rule verdict). */
function verdictCell(v: Verdict | undefined): string {
  if (!v) return '<td class="none">not verified</td>';
  const audit = v.judgeAudit ? ` · judge: ${v.judgeAudit.passed === null ? 'unscored' : v.judgeAudit.passed ? 'pass' : 'fail'}` : '';
  return `<td class="${v.passed ? 'pass' : 'fail'}" title="${esc(v.detail)}">${v.passed ? 'pass' : 'fail'}<small>${esc(audit)}</small></td>`;
}

const option = (value: string) => `<option value="${esc(value)}">${esc(value)}</option>`;
const distinct = (values: readonly string[]) => [...new Set(values)].sort();

const STYLE = `
body{font:14px/1.45 system-ui,sans-serif;margin:0;background:#f4f5f7;color:#1d2330}
header{position:sticky;top:0;background:#fff;border-bottom:1px solid #d8dbe2;padding:8px 16px;z-index:1}
h1{font-size:18px;margin:4px 0}
.simulated{background:#fff3cd;border:1px solid #e0b84c;padding:4px 8px;font-weight:600;margin:4px 0}
form label{margin-right:12px}
#pager{white-space:nowrap}
main[data-state=loading]{opacity:.6}
.error{color:#b3261e;font-weight:600}
main{padding:12px 16px;display:grid;gap:14px}
article{background:#fff;border:1px solid #d8dbe2;border-radius:6px;padding:12px;display:grid;grid-template-columns:220px 1fr;gap:4px 16px}
article[hidden]{display:none}
article img{grid-row:span 6;width:220px;height:auto;border-radius:4px;background:#eee}
h2{font-size:15px;margin:2px 0}
h3{font-size:13px;margin:6px 0 2px}
.meta{color:#5b6475;font-size:12px}
.badge{background:#e8ecf6;border-radius:3px;padding:0 5px;font-size:11px;font-weight:600}
.badge.drop{background:#ffe1cc;color:#8a3b00}
table.constraints{border-collapse:collapse;width:100%;font-size:12.5px}
table.constraints td,table.constraints th{border-top:1px solid #eceef2;padding:3px 6px;text-align:left;vertical-align:top}
tr.dropped{background:#fff6ef}
td.pass{color:#17692e;font-weight:600}
td.fail{color:#b3261e;font-weight:600}
td small{font-weight:400;color:#5b6475}
pre{white-space:pre-wrap;background:#f8f9fb;border:1px solid #eceef2;border-radius:4px;padding:8px;margin:0;max-height:320px;overflow:auto}
.pair{display:grid;grid-template-columns:1fr 1fr;gap:12px}
.rejected pre{background:#fdf6f6}
.turns{display:grid;gap:8px}
.turn h3{margin-top:2px}
.question{font-weight:600;margin:2px 0}
.instruction{margin:2px 0;color:#5b4a00}
body>h1,body>.simulated{margin:8px 16px}
#summary{margin:4px 16px 8px;background:#fff;border:1px solid #d8dbe2;border-radius:6px;padding:6px 12px}
#summary>summary{font-weight:600;cursor:pointer}
#summary .panels{display:flex;flex-wrap:wrap;gap:4px 32px;align-items:flex-start}
#summary h3{margin:6px 0 2px}
#summary ul{margin:0;padding-left:18px}
table.summary{border-collapse:collapse;font-size:12.5px}
table.summary td,table.summary th{border-top:1px solid #eceef2;padding:2px 8px;text-align:left}
.missing{color:#5b6475}
.reason code{color:#b3261e}
.no-image{grid-row:span 6;width:220px;height:120px;background:#eee;border-radius:4px;display:grid;place-items:center;color:#5b6475}
`;

/**
 * The page's script: loads the index, filters it (kind, source, and a (type, verdict) token of one
 * constraint), and renders one page of matches from the chunks that hold them. `main[data-state]`
 * says "ready" once the matches on screen are the current filter's (what a test waits on).
 */
const SCRIPT = `
const ids = ['f-kind', 'f-source', 'f-type', 'f-verdict'];
const main = document.querySelector('main');
const scripts = new Map();
const chunkName = (n) => 'chunk-' + String(n).padStart(5, '0') + '.js';
function load(name) {
  let entry = scripts.get(name);
  if (!entry) {
    entry = {};
    entry.promise = new Promise((resolve, reject) => { entry.resolve = resolve; entry.reject = reject; });
    scripts.set(name, entry);
    const tag = document.createElement('script');
    tag.src = DATA + name;
    tag.onerror = () => entry.reject(new Error('could not load ' + DATA + name + ': keep the page beside its data folder'));
    document.head.append(tag);
  }
  return entry.promise;
}
window.mmifViewer = {
  index: (data) => scripts.get('index.js').resolve(data),
  chunk: (n, articles) => scripts.get(chunkName(n)).resolve(articles),
};
let index;
let matches = [];
let page = 0;
let shownAt = 0;
function applyFilters() {
  const [kind, source, type, verdict] = ids.map((id) => document.getElementById(id).value);
  const k = index.kinds.indexOf(kind);
  const s = index.sources.indexOf(source);
  const wanted = new Set();
  index.tokens.forEach((t, i) => {
    const [tokenType, tokenVerdict] = t.split(':');
    if ((!type || tokenType === type) && (!verdict || tokenVerdict === verdict)) wanted.add(i);
  });
  const anyToken = !type && !verdict;
  matches = [];
  index.records.forEach(([rk, rs, rt], i) => {
    if ((!kind || rk === k) && (!source || rs === s) && (anyToken || rt.some((t) => wanted.has(t)))) matches.push(i);
  });
  page = 0;
  document.getElementById('shown').textContent = matches.length + ' of ' + index.records.length + ' shown.';
  return show();
}
async function show() {
  const at = ++shownAt;
  main.dataset.state = 'loading';
  const pages = Math.max(1, Math.ceil(matches.length / index.pageSize));
  document.getElementById('p-at').textContent = 'page ' + (page + 1) + ' of ' + pages;
  document.getElementById('p-prev').disabled = page === 0;
  document.getElementById('p-next').disabled = page + 1 >= pages;
  const slice = matches.slice(page * index.pageSize, (page + 1) * index.pageSize);
  const chunks = [...new Set(slice.map((i) => Math.floor(i / index.chunkSize)))];
  try {
    const loaded = new Map(await Promise.all(chunks.map(async (n) => [n, await load(chunkName(n))])));
    if (at !== shownAt) return;
    main.innerHTML = slice.map((i) => loaded.get(Math.floor(i / index.chunkSize))[i % index.chunkSize]).join('\\n');
    window.scrollTo(0, 0);
    performance.mark('mmif-rendered');
  } catch (err) {
    if (at !== shownAt) return;
    main.innerHTML = '';
    const p = document.createElement('p');
    p.className = 'error';
    p.textContent = err.message;
    main.append(p);
  }
  main.dataset.state = 'ready';
}
for (const id of ids) document.getElementById(id).addEventListener('change', applyFilters);
document.getElementById('p-prev').addEventListener('click', () => { page -= 1; show(); });
document.getElementById('p-next').addEventListener('click', () => { page += 1; show(); });
load('index.js').then((data) => { index = data; applyFilters(); }, (err) => {
  document.getElementById('shown').textContent = err.message;
  main.dataset.state = 'ready';
});
`;
