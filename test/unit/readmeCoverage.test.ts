/**
 * The documentation (README.md and docs/*.md, read together as one text: README first, then the docs
 * pages by name; "the README" below) documents everything a user can set: every build config field and
 * eval workflow input field, every `mmif` command, sub-action and flag, and every environment variable
 * the code reads. The lists come from the code itself (the zod schemas, the CLI modules' `parseFlags`
 * options, the env reads), so a new field, flag or variable without documentation fails; each rule is
 * stated at the function that applies it. The generated reference of docs/configuration.md (between
 * its markers) is left out: a field counts as documented only where prose explains it. The last tests
 * remove documented items from a copy of the README, so none of the checks can pass vacuously.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import type { z } from 'zod';
import { buildConfigSchema } from '../../config/buildConfig.js';
import * as envReaders from '../../config/envNumber.js';
import { MODEL_ROLES } from '../../config/modelsConfig.js';
import { evalConfigSchema } from '../../config/evalConfig.js';
import { BEGIN, END } from '../../cli/writeConfigReference.js';
import { defOf, WRAPPER_TYPES } from '../../config/zodDefs.js';
import { PRODUCT_FOLDERS } from '../harness/productFolders.js';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

// ---------------------------------------------------------------------------------------------
// README structure: sections, units (paragraphs, list items, table rows), backtick spans

/** The text under the first heading whose title contains `title`, up to the next heading of its level or above. */
function section(markdown: string, title: string): string {
  const lines = markdown.split('\n');
  let inFence = false;
  let start = -1;
  let level = 0;
  for (const [i, line] of lines.entries()) {
    if (line.startsWith('```')) inFence = !inFence;
    const heading = inFence ? null : /^(#{1,6}) (.*)$/.exec(line);
    if (!heading) continue;
    if (start >= 0 && heading[1]!.length <= level) return lines.slice(start, i).join('\n');
    if (start < 0 && heading[2]!.includes(title)) {
      start = i + 1;
      level = heading[1]!.length;
    }
  }
  assert.ok(start >= 0, `README.md and docs/ have no section titled "${title}"`);
  return lines.slice(start).join('\n');
}

/** Paragraphs, list items and table rows, each as one line of text; code blocks (examples) are left out. */
function units(text: string): string[] {
  const out: string[] = [];
  let current: string[] = [];
  let inFence = false;
  const flush = () => {
    if (current.length > 0) out.push(current.join(' '));
    current = [];
  };
  for (const line of text.split('\n')) {
    const trimmed = line.trim();
    if (trimmed.startsWith('```')) {
      flush();
      inFence = !inFence;
    } else if (inFence) continue;
    else if (trimmed === '') flush();
    else if (trimmed.startsWith('|')) {
      flush();
      out.push(trimmed);
    } else {
      if (/^([-*]|\d+\.) /.test(trimmed)) flush();
      current.push(trimmed);
    }
  }
  flush();
  return out;
}

const spans = (unit: string): string[] => [...unit.matchAll(/`([^`]+)`/g)].map((m) => m[1]!);
const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
/** `word` in `text`, not part of a longer identifier (a leading `.` is allowed: `.maxDelayMs`). */
const hasWord = (text: string, word: string) => new RegExp(`(?<![\\w-])${escape(word)}(?![\\w])`).test(text);
/** `dotted` in `text`, not the tail of a longer path (`llm.retry.maxAttempts` is not `retry.maxAttempts`). */
const hasPath = (text: string, dotted: string) => new RegExp(`(?<![\\w.-])${escape(dotted)}(?![\\w])`).test(text);

// ---------------------------------------------------------------------------------------------
// Config fields

/** Object keys at every depth; `[]` marks an array element, `*` a record value. */
function schemaFields(schema: z.ZodType): string[][] {
  const seen = new Map<string, string[]>();
  const walk = (s: z.ZodType, at: string[]) => {
    const def = defOf(s);
    const inner = (key: string) => def[key] as z.ZodType;
    if (WRAPPER_TYPES.has(def.type)) return walk(inner('innerType'), at);
    switch (def.type) {
      case 'object':
        for (const [key, field] of Object.entries(def.shape as Record<string, z.ZodType>)) {
          const fieldPath = [...at, key];
          seen.set(fieldPath.join('\u0000'), fieldPath);
          walk(field, fieldPath);
        }
        return;
      case 'pipe':
        walk(inner('in'), at);
        return walk(inner('out'), at);
      case 'union':
        for (const option of def.options as z.ZodType[]) walk(option, at);
        return;
      case 'intersection':
        walk(inner('left'), at);
        return walk(inner('right'), at);
      case 'array':
        return walk(inner('element'), [...at, '[]']);
      case 'record':
        return walk(inner('valueType'), [...at, '*']);
      case 'tuple':
        for (const item of def.items as z.ZodType[]) walk(item, [...at, '[]']);
        return;
      case 'lazy':
        return walk((def.getter as () => z.ZodType)(), at);
      default:
        return; // a leaf: string, number, enum, literal, boolean, never, transform...
    }
  };
  walk(schema, []);
  return [...seen.values()];
}

const named = (fieldPath: string[]) => fieldPath.filter((segment) => segment !== '[]' && segment !== '*');

/**
 * Whether `fieldPath` (named segments) is documented in `text`: a paragraph, list item or table row has,
 * in a backtick span, either (a) its dotted path, two segments or more (`llm.errorBudget.maxFraction`;
 * array and record levels dropped; a source's fields relative to the source entry: `richness.minScore`),
 * or (b) its key, as a span that starts with it (`maxSamples`; `.maxDelayMs` below a parent) or an
 * object listing that names it (`{ model, baseUrl? }`), with its parent key as a word in a backtick span
 * in the same unit (a top-level key needs no parent).
 */
function documentedIn(text: string, fieldPath: string[]): boolean {
  const key = fieldPath.at(-1)!;
  const parent = fieldPath.at(-2);
  // `.maxDelayMs` continues the path of the row it is in, so it needs a parent.
  const namesKey = (span: string) => new RegExp(`^${parent === undefined ? '' : '\\.?'}${escape(key)}(?![\\w])`).test(span) || (span.startsWith('{') && hasWord(span, key));
  return units(text).some((unit) => {
    const unitSpans = spans(unit);
    if (fieldPath.length > 1 && unitSpans.some((span) => hasPath(span, fieldPath.join('.')))) return true;
    return unitSpans.some(namesKey) && (parent === undefined || unitSpans.some((span) => hasWord(span, parent)));
  });
}

const shown = (field: string[]) => field.join('.').replaceAll('.[]', '[]').replaceAll('.*', '.<key>');

/**
 * Build config fields the README does not document, as dotted paths (`sources[].richness.url`): the
 * schema (config/buildConfig.ts with sourceConfig.ts and imageConfig.ts) walked through its zod v4
 * definitions, every object key at every depth a field, looked for in the "Build configuration"
 * section (and, for `sources[]` entries, the "Sources" section and its subsections; code blocks, being
 * examples, do not count). A source field that is also a build field is documented with it.
 */
function undocumentedConfigFields(readme: string): string[] {
  const buildSection = section(readme, 'Build configuration');
  const sourcesSection = section(readme, 'Sources');
  const fields = schemaFields(buildConfigSchema as unknown as z.ZodType);
  const buildField = buildFieldCheck(readme);
  const missing: string[] = [];
  for (const field of fields) {
    const inSource = field[0] === 'sources' && field.length > 2;
    const relative = named(inSource ? field.slice(2) : field);
    const ok = inSource ? documentedIn(sourcesSection, relative) || buildField(relative) : documentedIn(buildSection, relative);
    if (!ok) missing.push(shown(field));
  }
  return [...new Set(missing)];
}

/** Whether a path (named segments) is a build config field outside `sources[]` that the README documents. */
function buildFieldCheck(readme: string): (path: string[]) => boolean {
  const buildSection = section(readme, 'Build configuration');
  const fields = new Set(
    schemaFields(buildConfigSchema as unknown as z.ZodType)
      .filter((f) => f[0] !== 'sources')
      .map((f) => named(f).join('.')),
  );
  return (path) => fields.has(path.join('.')) && documentedIn(buildSection, path);
}

/**
 * Eval workflow input fields (config/evalConfig.ts) the `mmif eval` section does not document; the
 * endpoint fields of `model` and `judge` count with a build's `models.<role>`, and `retry`, `llm`
 * and `s3` with the build's.
 */
function undocumentedEvalFields(readme: string): string[] {
  const evalSection = section(readme, 'and `npx mmif eval`');
  const buildField = buildFieldCheck(readme);
  const asBuild = (path: string[]) => (path[0] === 'model' || path[0] === 'judge' ? ['models', 'default', ...path.slice(1)] : path);
  return schemaFields(evalConfigSchema as unknown as z.ZodType)
    .filter((field) => !documentedIn(evalSection, named(field)) && !(field.length > 1 && buildField(asBuild(named(field)))))
    .map(shown);
}

// ---------------------------------------------------------------------------------------------
// Commands, sub-actions and flags

interface CommandSurface {
  name: string;
  module: string;
  flags: Array<{ name: string; short?: string }>;
  actions: string[];
}

async function parseTs(relative: string): Promise<ts.SourceFile> {
  return ts.createSourceFile(relative, await readFile(path.join(REPO, relative), 'utf8'), ts.ScriptTarget.Latest, true);
}

function visit(node: ts.Node, fn: (n: ts.Node) => void): void {
  fn(node);
  node.forEachChild((child) => visit(child, fn));
}

const propertyName = (name: ts.PropertyName): string | undefined =>
  ts.isIdentifier(name) || ts.isStringLiteral(name) || ts.isNoSubstitutionTemplateLiteral(name) ? name.text : undefined;

function objectProperty(object: ts.ObjectLiteralExpression, name: string): ts.Expression | undefined {
  for (const p of object.properties) if (ts.isPropertyAssignment(p) && propertyName(p.name) === name) return p.initializer;
  return undefined;
}

/**
 * The commands of cli/mmif.ts's COMMANDS, each with the flags and sub-actions its module parses: the
 * module its `load` imports is read for its `parseFlags({ options })` flags and the `case` labels of a
 * `switch (action)` (sub-actions such as `schedule create`).
 */
async function cliSurface(): Promise<CommandSurface[]> {
  const dispatcher = await parseTs('cli/mmif.ts');
  const commands: CommandSurface[] = [];
  visit(dispatcher, (node) => {
    if (!ts.isVariableDeclaration(node) || node.name.getText() !== 'COMMANDS' || !node.initializer || !ts.isObjectLiteralExpression(node.initializer)) return;
    for (const p of node.initializer.properties) {
      if (!ts.isPropertyAssignment(p)) continue;
      let spec: string | undefined;
      visit(p.initializer, (n) => {
        if (ts.isCallExpression(n) && n.expression.kind === ts.SyntaxKind.ImportKeyword && ts.isStringLiteral(n.arguments[0]!)) spec = n.arguments[0].text;
      });
      assert.ok(spec, `cli/mmif.ts: command ${p.name.getText()} imports no module`);
      commands.push({ name: propertyName(p.name)!, module: path.posix.join('cli', spec.replace(/\.js$/, '.ts')), flags: [], actions: [] });
    }
  });
  for (const command of commands) {
    const source = await parseTs(command.module);
    visit(source, (node) => {
      if (ts.isCallExpression(node) && node.expression.getText() === 'parseFlags' && node.arguments[0] && ts.isObjectLiteralExpression(node.arguments[0])) {
        const options = objectProperty(node.arguments[0], 'options');
        assert.ok(options && ts.isObjectLiteralExpression(options), `${command.module}: parseFlags options are not an object literal`);
        for (const option of options.properties) {
          assert.ok(ts.isPropertyAssignment(option) && ts.isObjectLiteralExpression(option.initializer), `${command.module}: option ${option.getText()} is not a literal`);
          const short = objectProperty(option.initializer, 'short');
          command.flags.push({ name: propertyName(option.name)!, ...(short && ts.isStringLiteral(short) ? { short: short.text } : {}) });
        }
      }
      if (ts.isSwitchStatement(node) && node.expression.getText() === 'action') {
        for (const clause of node.caseBlock.clauses) if (ts.isCaseClause(clause) && ts.isStringLiteral(clause.expression)) command.actions.push(clause.expression.text);
      }
    });
  }
  return commands;
}

/**
 * Commands, sub-actions and flags missing from the README's command table (`eval --chats`, `schedule
 * pause`): "The `mmif` command" table must have a row whose first cell starts with the command
 * (`` `eval --data...` ``), and the first cells of that command's rows must name every flag (`--flag`,
 * or `-x` for a short option) and every sub-action (a span starting with it, after the command name).
 * `--help` is the dispatcher's, for every command, and is checked once.
 */
function undocumentedCli(readme: string, commands: CommandSurface[]): string[] {
  const table = section(readme, 'The `mmif` command')
    .split('\n')
    .filter((line) => line.startsWith('|'))
    .map((row) => spans(row.split(/(?<!\\)\|/)[1] ?? '').map((span) => span.replaceAll('\\|', '|')));
  const missing: string[] = [];
  if (!hasWord(readme, '--help')) missing.push('--help');
  for (const command of commands) {
    const rows = table.filter((cell) => cell[0] !== undefined && new RegExp(`^${escape(command.name)}(\\s|$)`).test(cell[0]));
    if (rows.length === 0) {
      missing.push(command.name);
      continue;
    }
    const text = rows.flat().join(' ');
    for (const flag of command.flags) {
      if (flag.name === 'help') continue;
      if (!hasWord(text, `--${flag.name}`) && !(flag.short && hasWord(text, `-${flag.short}`))) missing.push(`${command.name} --${flag.name}`);
    }
    for (const action of command.actions) {
      const named = rows.flat().some((span) => new RegExp(`^(${escape(command.name)}\\s+)?${escape(action)}(\\s|$)`).test(span));
      if (!named) missing.push(`${command.name} ${action}`);
    }
  }
  return missing;
}

// ---------------------------------------------------------------------------------------------
// Environment variables

const PRODUCTION_FOLDERS = [...PRODUCT_FOLDERS, 'local', 'simulator'];
const ENV_NAME = /^[A-Z][A-Z0-9]*(_[A-Z0-9]+)+$/;
/** Template reads and what they iterate: `env[`MMIF_MODEL_${role.toUpperCase()}`]` over MODEL_ROLES. */
const TEMPLATE_EXPANSIONS: Record<string, readonly string[]> = { MMIF_MODEL_: MODEL_ROLES.map((s) => s.toUpperCase()) };

const isEnvObject = (e: ts.Expression) => /(^|\.)env$/.test(e.getText());
/** Every function config/envNumber.ts exports reads a variable named by its argument: a call of one is a computed read. */
const ENV_READERS = Object.values(envReaders).map((reader) => reader.name);

/**
 * The environment variables the production code reads: every production folder (the layers, local/,
 * simulator/) is read for `env.NAME` / `process.env.NAME` / `env['NAME']`; a template read
 * (`env[`MMIF_MODEL_${...}`]`) is expanded over what it iterates; a file that reads `env[name]` with a
 * computed name contributes its string literals and property names shaped like variable names
 * (`'SIM_PORT'`, `SIM_RATE_429: 'rate429'`), as does a file calling one of ENV_READERS. Each must appear in the README as a word. Scanned once per run.
 */
function envVarsRead(): Promise<string[]> {
  return (envVarsScanned ??= scanEnvVars());
}
let envVarsScanned: Promise<string[]> | undefined;

async function scanEnvVars(): Promise<string[]> {
  const names = new Set<string>();
  for (const folder of PRODUCTION_FOLDERS) {
    const entries = await readdir(path.join(REPO, folder), { withFileTypes: true, recursive: true });
    for (const entry of entries.filter((e) => e.isFile() && e.name.endsWith('.ts'))) {
      const file = path.relative(REPO, path.join(entry.parentPath, entry.name));
      const text = await readFile(path.join(REPO, file), 'utf8');
      // Every read goes through an identifier named `env` (isEnvObject) or ENV_READERS: a file without either reads none.
      if (!/\benv\b/.test(text) && !ENV_READERS.some((reader) => text.includes(reader))) continue;
      const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
      let computed = false;
      const literals: string[] = [];
      visit(source, (node) => {
        if (ts.isPropertyAccessExpression(node) && isEnvObject(node.expression) && ENV_NAME.test(node.name.text)) names.add(node.name.text);
        if (ts.isElementAccessExpression(node) && isEnvObject(node.expression)) {
          const arg = node.argumentExpression;
          if (ts.isStringLiteral(arg) || ts.isNoSubstitutionTemplateLiteral(arg)) names.add(arg.text);
          else if (ts.isTemplateExpression(arg)) {
            const expansion = TEMPLATE_EXPANSIONS[arg.head.text];
            assert.ok(expansion, `${source.fileName}: env[\`${arg.head.text}\${...}\`]: add what it iterates to TEMPLATE_EXPANSIONS`);
            for (const tail of expansion) names.add(arg.head.text + tail);
          } else computed = true;
        }
        if (ts.isCallExpression(node) && ENV_READERS.includes(node.expression.getText())) computed = true;
        if (ts.isStringLiteral(node) && ENV_NAME.test(node.text)) literals.push(node.text);
        if (ts.isPropertyAssignment(node) && ENV_NAME.test(propertyName(node.name) ?? '')) literals.push(propertyName(node.name)!);
      });
      if (computed) for (const name of literals) names.add(name);
    }
  }
  return [...names].sort();
}

function undocumentedEnv(readme: string, names: string[]): string[] {
  return names.filter((name) => !new RegExp(`(?<![A-Z0-9_])${name}(?![A-Z0-9_])`).test(readme));
}

// ---------------------------------------------------------------------------------------------

/** README.md, then docs/*.md by name, without the generated configuration reference. */
async function readme(): Promise<string> {
  const pages = (await readdir(path.join(REPO, 'docs'))).filter((name) => name.endsWith('.md')).sort();
  const texts = [await readFile(path.join(REPO, 'README.md'), 'utf8')];
  for (const page of pages) texts.push(await readFile(path.join(REPO, 'docs', page), 'utf8'));
  const all = texts.join('\n\n');
  const start = all.indexOf(BEGIN);
  const end = all.indexOf(END);
  assert.ok(start >= 0 && end > start, 'docs/configuration.md has no generated reference');
  return all.slice(0, start) + all.slice(end + END.length);
}

test('README documents every build config field (Build configuration, Sources)', async () => {
  assert.deepEqual(undocumentedConfigFields(await readme()), []);
});

test('README documents every field of the mmif eval workflow input', async () => {
  assert.deepEqual(undocumentedEvalFields(await readme()), []);
});

test('README documents every mmif command, sub-action and flag in its command table', async () => {
  assert.deepEqual(undocumentedCli(await readme(), await cliSurface()), []);
});

test('README names every environment variable the code reads', async () => {
  assert.deepEqual(undocumentedEnv(await readme(), await envVarsRead()), []);
});

test('the extractors find what the code declares', async () => {
  const fields = schemaFields(buildConfigSchema as unknown as z.ZodType).map((f) => f.join('.'));
  for (const f of [
    'holdout.fraction',
    'llm.errorBudget.maxConsecutive',
    'llm.prices.*.batchDiscount',
    'sources.[].richness.minScore',
    'sources.[].question.dropFewShot',
    'sources.[].keepTasks',
    'models.judge.taskQueue',
    'chat.pifThreshold',
  ]) {
    assert.ok(fields.includes(f), `schema walk misses ${f}`);
  }
  const commands = await cliSurface();
  const flags = (name: string) => commands.find((c) => c.name === name)?.flags.map((f) => f.short ?? f.name);
  assert.ok(flags('eval')?.includes('multiturn') && flags('eval')?.includes('append-instructions'));
  assert.ok(flags('inspect')?.includes('n'));
  assert.ok(flags('verify')?.includes('records'));
  assert.deepEqual(commands.find((c) => c.name === 'schedule')?.actions.sort(), ['backfill', 'create', 'delete', 'describe', 'list', 'pause', 'trigger', 'unpause']);
  const env = await envVarsRead();
  for (const name of [
    'MMIF_TASK_QUEUE',
    'MMIF_MAX_CONCURRENT_ACTIVITIES',
    'MMIF_MODEL_JUDGE',
    'TEMPORAL_PROFILE',
    'AWS_SESSION_TOKEN',
    'SIM_RATE_429',
    'SIM_PORT',
    'MMIF_S3_ENDPOINT',
  ]) {
    assert.ok(env.includes(name), `env scan misses ${name}`);
  }
});

test('removing documentation makes each check report it', async () => {
  const text = await readme();
  const without = (pattern: RegExp) => {
    const cut = text.replace(pattern, '');
    assert.notEqual(cut, text, `${pattern} matched nothing in README.md`);
    return cut;
  };
  // A config table row, and a field named only inside a source's `{...}` list.
  assert.deepEqual(undocumentedConfigFields(without(/^\| `holdout\.fraction` .*\n/m)), ['holdout', 'holdout.fraction']);
  assert.deepEqual(undocumentedConfigFields(text.replaceAll('attachTables', 'attach-tables')), ['sources[].attachTables']);
  assert.deepEqual(undocumentedEvalFields(without(/^\| `responses` .*\n/m)), ['responses']);
  // A flag and a sub-action of the command table.
  const commands = await cliSurface();
  assert.deepEqual(undocumentedCli(without(/ \[--append-instructions\]/), commands), ['eval --append-instructions']);
  assert.deepEqual(undocumentedCli(without(/ \/ `trigger <id>`/), commands), ['schedule trigger']);
  // An environment variable.
  const env = ['MMIF_TASK_QUEUE_ACTIVITIES_PER_SECOND'];
  assert.deepEqual(undocumentedEnv(text.replaceAll('MMIF_TASK_QUEUE_ACTIVITIES_PER_SECOND', 'MMIF_TASK_QUEUE'), env), env);
});
