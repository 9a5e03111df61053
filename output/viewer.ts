/**
 * `mmif view`'s page: one static HTML file showing a build's samples with their images. An SFT record
 * shows its instruction, each constraint with how it was verified and its verdict, and the answer; a
 * DPO pair shows the chosen and rejected answers side by side, the dropped constraints marked. A
 * multiturn build's chat shows each turn (the instruction added there, the question, the answer, its
 * verdict on every instruction in force and its PIF); a turn-level pair shows its last user turn, the
 * instruction the rejected answer's context left out, and both answers. The
 * page filters by source, constraint type and verdict with a few lines of inline script; everything
 * else is plain HTML, readable without script. Pure: records in, text out.
 */
import type { Verdict } from '../domain/verdict.js';
import { getJson, type ObjectStore } from '../storage/objectStore.js';
import type { BuildReport } from './buildReport.js';
import type { BuildLayout } from '../storage/buildLayout.js';
import type { ShardManifest } from './manifest.js';
import type { DpoRecord, InstructRecord } from './records.js';
import { dpoRecordFromLine, instructRecordFromLine } from './sharegpt.js';
import type { ChatPairSharegptRow, ChatSharegptRow } from './chatFormats.js';
import type { StoredConfig } from '../pipeline/planBuild.js';

export interface ViewerInput {
  buildId: string;
  simulated: boolean;
  instruct: readonly InstructRecord[];
  dpo: readonly DpoRecord[];
  /** The `src` of a record's image as the page will reach it (relative to the page, or a served path). */
  imageSrc: (imagePath: string) => string;
  /** A multiturn build's chats and turn-level pairs, as written (chat/, chat-dpo/). */
  chats?: readonly ChatSharegptRow[];
  chatPairs?: readonly ChatPairSharegptRow[];
  /** Records left out by a display limit, said on the page (chats counted as SFT records, pairs as DPO pairs). */
  omitted?: { instruct: number; dpo: number };
}

/** What the page shows, without where its images are reached from. */
export type ViewerRecords = Omit<ViewerInput, 'imageSrc'>;

/** The committed shards' records, in shard order, up to `limit` of each kind; undefined when no shard is committed. */
export async function loadViewerRecords(store: ObjectStore, layout: BuildLayout, limit: number): Promise<ViewerRecords | undefined> {
  const shards: number[] = [];
  for await (const { key } of store.list(layout.manifestsPrefix)) {
    const manifest = await getJson<ShardManifest>(store, key);
    if (manifest) shards.push(manifest.shard);
  }
  if (shards.length === 0) return undefined;
  const instruct: InstructRecord[] = [];
  const dpo: DpoRecord[] = [];
  const omitted = { instruct: 0, dpo: 0 };
  const lines = async (key: string) => ((await store.get(key)) ?? Buffer.alloc(0)).toString('utf8').split('\n').filter(Boolean);
  const report = await getJson<BuildReport>(store, layout.report);
  if ((await getJson<StoredConfig>(store, layout.config))?.config.mode === 'multiturn') {
    const chats: ChatSharegptRow[] = [];
    const chatPairs: ChatPairSharegptRow[] = [];
    for (const shard of shards.sort((a, b) => a - b)) {
      for (const line of await lines(layout.chatJsonl(shard))) {
        if (chats.length < limit) chats.push(JSON.parse(line) as ChatSharegptRow);
        else omitted.instruct += 1;
      }
      for (const line of await lines(layout.chatDpoJsonl(shard))) {
        if (chatPairs.length < limit) chatPairs.push(JSON.parse(line) as ChatPairSharegptRow);
        else omitted.dpo += 1;
      }
    }
    return { buildId: layout.root, simulated: report?.simulated ?? false, instruct, dpo, chats, chatPairs, omitted };
  }
  for (const shard of shards.sort((a, b) => a - b)) {
    for (const line of await lines(layout.instructJsonl(shard))) {
      if (instruct.length < limit) instruct.push(instructRecordFromLine(line));
      else omitted.instruct += 1;
    }
    for (const line of await lines(layout.dpoJsonl(shard))) {
      if (dpo.length < limit) dpo.push(dpoRecordFromLine(line));
      else omitted.dpo += 1;
    }
  }
  const simulated = report?.simulated ?? [...instruct, ...dpo].some((r) => r.simulated);
  return { buildId: layout.root, simulated, instruct, dpo, omitted };
}

export function viewerHtml(input: ViewerInput): string {
  const records = [...input.instruct, ...input.dpo];
  const chats = (input.chats ?? []).map((row) => ({ row, meta: JSON.parse(row.metadata) as ChatMeta }));
  const chatPairs = (input.chatPairs ?? []).map((row) => ({ row, meta: JSON.parse(row.metadata) as ChatPairMeta }));
  const sources = distinct([...records.map((r) => r.source), ...chats.map((c) => c.meta.source), ...chatPairs.map((p) => p.meta.source)]);
  const types = distinct([...records.flatMap((r) => r.constraints.map((c) => c.type)), ...chats.flatMap((c) => c.meta.instructions.map((x) => x.type))]);
  const omitted = input.omitted && input.omitted.instruct + input.omitted.dpo > 0 ? ` (${input.omitted.instruct} SFT records and ${input.omitted.dpo} pairs beyond the display limit are not shown)` : '';
  const counts = chats.length + chatPairs.length > 0 ? `${chats.length} chats, ${chatPairs.length} turn-level pairs` : `${input.instruct.length} SFT records, ${input.dpo.length} DPO pairs`;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>mmif view: ${esc(input.buildId)}</title>
<style>${STYLE}</style>
</head>
<body>
<header>
<h1>${esc(input.buildId)}</h1>
${input.simulated ? '<p class="simulated">SIMULATED DATA: model replies came from the mmif simulator, not a real model.</p>' : ''}
<p>${counts}${esc(omitted)}. <span id="shown"></span></p>
<form id="filters">
<label>kind <select id="f-kind"><option value="">all</option><option value="sft">SFT records</option><option value="dpo">DPO pairs</option>${chats.length > 0 ? '<option value="chat">chats</option><option value="chat-dpo">turn-level pairs</option>' : ''}</select></label>
<label>source <select id="f-source"><option value="">all</option>${sources.map(option).join('')}</select></label>
<label>constraint type <select id="f-type"><option value="">all</option>${types.map(option).join('')}</select></label>
<label>verdict <select id="f-verdict"><option value="">any</option><option value="passed">passed</option><option value="failed">failed</option></select></label>
</form>
</header>
<main>
${input.instruct.map((r) => sftArticle(r, input.imageSrc)).join('\n')}
${input.dpo.map((r) => pairArticle(r, input.imageSrc)).join('\n')}
${chats.map((c) => chatArticle(c.row, c.meta, input.imageSrc)).join('\n')}
${chatPairs.map((p) => chatPairArticle(p.row, p.meta, input.imageSrc)).join('\n')}
</main>
<script>${SCRIPT}</script>
</body>
</html>
`;
}

/**
 * `data-verdicts` lists `type:passed` / `type:failed` for every constraint (the chosen answer's
 * verdict in a pair): the type and verdict filters match a sample with such a constraint.
 */
function dataAttributes(kind: 'sft' | 'dpo', r: InstructRecord | DpoRecord): string {
  const tokens = r.verdicts.map((v) => `${v.type}:${v.passed ? 'passed' : 'failed'}`);
  return `class="sample ${kind}" data-kind="${kind}" data-source="${esc(r.source)}" data-verdicts="${esc(distinct(tokens).join(' '))}"`;
}

function header(r: InstructRecord | DpoRecord, imageSrc: ViewerInput['imageSrc'], label: string): string {
  return `<img src="${esc(imageSrc(r.image_path))}" alt="image of ${esc(r.id)}" loading="lazy">
<div class="meta"><span class="badge">${label}</span> <code>${esc(r.id)}</code> · ${esc(r.source)} <code>${esc(r.source_id)}</code> · pass rate ${r.pass_rate.toFixed(2)}</div>
<h2>${esc(r.instruction)}</h2>`;
}

function sftArticle(r: InstructRecord, imageSrc: ViewerInput['imageSrc']): string {
  const rows = r.constraints.map((c, i) => {
    const v = r.verdicts.find((x) => x.index === i);
    return `<tr><td>${i + 1}</td><td><code>${esc(c.type)}</code></td><td>${esc(c.value)}</td><td>${esc(c.method)}</td>${verdictCell(v)}</tr>`;
  });
  return `<article ${dataAttributes('sft', r)}>
${header(r, imageSrc, 'SFT')}
<table class="constraints"><thead><tr><th>#</th><th>type</th><th>constraint</th><th>method</th><th>verdict</th></tr></thead><tbody>${rows.join('')}</tbody></table>
<h3>Answer <small>(${r.answer_attempts} attempt${r.answer_attempts === 1 ? '' : 's'}, ${esc(r.models.answer)})</small></h3>
<pre>${esc(r.answer)}</pre>
</article>`;
}

function pairArticle(r: DpoRecord, imageSrc: ViewerInput['imageSrc']): string {
  const dropped = new Set(r.dropped_constraints.map((c) => `${c.type}\u0000${c.value}`));
  const rows = r.constraints.map((c, i) => {
    const isDropped = dropped.has(`${c.type}\u0000${c.value}`);
    const chosen = r.verdicts.find((x) => x.index === i);
    const rejected = r.rejected_verdicts.find((x) => x.index === i);
    return `<tr${isDropped ? ' class="dropped"' : ''}><td>${i + 1}</td><td><code>${esc(c.type)}</code>${isDropped ? ' <span class="badge drop">dropped</span>' : ''}</td><td>${esc(c.value)}</td><td>${esc(c.method)}</td>${verdictCell(chosen)}${verdictCell(rejected)}</tr>`;
  });
  return `<article ${dataAttributes('dpo', r)}>
${header(r, imageSrc, `DPO · ${esc(r.strategy)}`)}
<table class="constraints"><thead><tr><th>#</th><th>type</th><th>constraint</th><th>method</th><th>chosen</th><th>rejected</th></tr></thead><tbody>${rows.join('')}</tbody></table>
<div class="pair">
<section class="chosen"><h3>Chosen <small>(${esc(r.chosen_model)})</small></h3><pre>${esc(r.chosen)}</pre></section>
<section class="rejected"><h3>Rejected <small>(${esc(r.rejected_model)}, ${esc(r.strategy)})</small></h3><pre>${esc(r.rejected)}</pre></section>
</div>
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

const chatData = (kind: 'chat' | 'chat-dpo', id: string, source: string, verdicts: readonly Verdict[]) =>
  `class="sample ${kind}" data-kind="${kind}" data-source="${esc(source)}" data-verdicts="${esc(distinct(verdicts.map((v) => `${v.type}:${v.passed ? 'passed' : 'failed'}`)).join(' '))}" id="${esc(id)}"`;

const plainTurn = (value: string) => value.replace(/^<image>\n/, '');

function chatArticle(row: ChatSharegptRow, meta: ChatMeta, imageSrc: ViewerInput['imageSrc']): string {
  const turns = meta.turns.map((t, i) => {
    const cells = t.verdicts.map((v) => `<tr><td><code>${esc(v.type)}</code></td>${verdictCell(v)}</tr>`).join('');
    return `<section class="turn"><h3>Turn ${t.turn} <small>(PIF ${t.pif.toFixed(2)}, ${t.attempts} attempt${t.attempts === 1 ? '' : 's'})</small></h3>
${t.instruction ? `<p class="instruction"><span class="badge">new instruction</span> ${esc(t.instruction)}</p>` : ''}
<p class="question">${esc(plainTurn(row.conversations[2 * i]!.value).slice(t.instruction ? t.instruction.length + 2 : 0))}</p>
<pre>${esc(row.conversations[2 * i + 1]!.value)}</pre>
${cells ? `<table class="constraints"><thead><tr><th>instruction in force</th><th>verdict</th></tr></thead><tbody>${cells}</tbody></table>` : ''}</section>`;
  });
  return `<article ${chatData('chat', row.id, meta.source, meta.turns.flatMap((t) => t.verdicts))}>
<img src="${esc(imageSrc(row.images[0]))}" alt="image of ${esc(row.id)}" loading="lazy">
<div class="meta"><span class="badge">chat</span> <code>${esc(row.id)}</code> · ${esc(meta.source)} <code>${esc(meta.source_id)}</code> · ${meta.turns.length} turns, ${meta.instructions.length} instructions</div>
<div class="turns">${turns.join('\n')}</div>
</article>`;
}

function chatPairArticle(row: ChatPairSharegptRow, meta: ChatPairMeta, imageSrc: ViewerInput['imageSrc']): string {
  return `<article ${chatData('chat-dpo', row.id, meta.source, meta.chosen_verdicts)}>
<img src="${esc(imageSrc(row.images[0]))}" alt="image of ${esc(row.id)}" loading="lazy">
<div class="meta"><span class="badge">turn-level pair</span> <code>${esc(row.id)}</code> · turn ${meta.turn} · ${esc(meta.source)} <code>${esc(meta.source_id)}</code></div>
<h2>${esc(plainTurn(row.conversations.at(-1)!.value))}</h2>
<p><span class="badge drop">left out</span> turn ${meta.forgotten_turn}'s instruction <code>${esc(meta.forgotten_instruction.type)}</code>: ${esc(meta.forgotten_instruction.value)}</p>
<div class="pair">
<section class="chosen"><h3>Chosen</h3><pre>${esc(row.chosen.value)}</pre></section>
<section class="rejected"><h3>Rejected <small>(fails: ${esc(meta.rejected_verdicts.filter((v) => !v.passed).map((v) => v.type).join(', '))})</small></h3><pre>${esc(row.rejected.value)}</pre></section>
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

function esc(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');
}

const STYLE = `
body{font:14px/1.45 system-ui,sans-serif;margin:0;background:#f4f5f7;color:#1d2330}
header{position:sticky;top:0;background:#fff;border-bottom:1px solid #d8dbe2;padding:8px 16px;z-index:1}
h1{font-size:18px;margin:4px 0}
.simulated{background:#fff3cd;border:1px solid #e0b84c;padding:4px 8px;font-weight:600;margin:4px 0}
form label{margin-right:12px}
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
`;

/** The filters: a sample shows when it matches kind, source, and (type, verdict) on one of its constraints. */
const SCRIPT = `
const ids = ['f-kind', 'f-source', 'f-type', 'f-verdict'];
function applyFilters() {
  const [kind, source, type, verdict] = ids.map((id) => document.getElementById(id).value);
  let shown = 0;
  const articles = document.querySelectorAll('article.sample');
  for (const a of articles) {
    const tokens = a.dataset.verdicts.split(' ').filter(Boolean);
    const match =
      (!kind || a.dataset.kind === kind) &&
      (!source || a.dataset.source === source) &&
      ((!type && !verdict) || tokens.some((t) => {
        const [tokenType, tokenVerdict] = t.split(':');
        return (!type || tokenType === type) && (!verdict || tokenVerdict === verdict);
      }));
    a.hidden = !match;
    if (match) shown += 1;
  }
  document.getElementById('shown').textContent = shown + ' of ' + articles.length + ' shown.';
}
for (const id of ids) document.getElementById(id).addEventListener('change', applyFilters);
applyFilters();
`;
