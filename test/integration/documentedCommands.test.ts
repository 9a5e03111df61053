/**
 * Every shell command of README.md and docs/*.md (their fenced `bash` / `sh` blocks) runs as written
 * from a checkout after the README's install step, and no inline code span of their prose names a
 * bare `mmif ...` (issue 34). Statically: `mmif` is called as `npx mmif` or `npm run mmif --` (a bare
 * `mmif` is not on the PATH after `npm install`), with a command that exists and only flags its
 * `--help` names; the Temporal and Hub CLIs by a path that exists, their subcommands and flags checked
 * by the CLI itself (`--help` appended). Then the commands that need no outside service run for real,
 * in a scratch folder holding the checkout's `samples/`, with `npx mmif` as the checkout's bin, no
 * endpoint and no Temporal address that answers. Commands that need a service are listed in SKIPPED
 * with the reason; a command neither run nor listed fails.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const BIN = path.join(ROOT, (JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { bin: { mmif: string } }).bin.mmif);
const DOCS = ['README.md', ...readdirSync(path.join(ROOT, 'docs')).flatMap((f) => (f.endsWith('.md') ? [`docs/${f}`] : []))];

interface Documented {
  /** Where: file and line of the command's first line. */
  at: string;
  command: string;
  /** `export`s earlier in the same block. */
  env: Record<string, string>;
  /** The lines above the block: a config its commands read is shown there. */
  above: string;
}

/** Lines above a block searched for the config its commands read. */
const ABOVE = 40;

/** The commands of each fenced bash/sh block: comments dropped, continued lines joined. */
function documentedCommands(): Documented[] {
  const found: Documented[] = [];
  for (const file of DOCS) {
    const lines = readFileSync(path.join(ROOT, file), 'utf8').split('\n');
    let fenced = false;
    let block: { env: Record<string, string>; above: string } | undefined;
    for (let i = 0; i < lines.length; i++) {
      const line = lines[i]!;
      if (line.startsWith('```')) {
        fenced = !fenced;
        block = fenced && /^```(bash|sh)\s*$/.test(line) ? { env: {}, above: lines.slice(Math.max(0, i - ABOVE), i).join('\n') } : undefined;
        continue;
      }
      if (!block) continue;
      let command = withoutComment(line);
      const first = i;
      while (command.endsWith('\\')) command = `${command.slice(0, -1).trimEnd()} ${withoutComment(lines[++i]!)}`;
      if (!command) continue;
      const exported = /^export\s+(.*)$/.exec(command);
      if (exported) {
        for (const pair of words(exported[1]!)) block.env[pair.slice(0, pair.indexOf('='))] = pair.slice(pair.indexOf('=') + 1);
        continue;
      }
      found.push({ at: `${file}:${first + 1}`, command, env: { ...block.env }, above: block.above });
    }
  }
  return found;
}

/** The line without a shell comment (`#` at the start or after a blank, outside quotes). */
function withoutComment(line: string): string {
  let quote = '';
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (quote) quote = c === quote ? '' : quote;
    else if (c === '"' || c === "'") quote = c;
    else if (c === '#' && (i === 0 || /\s/.test(line[i - 1]!))) return line.slice(0, i).trim();
  }
  return line.trim();
}

/** The words of a command, quotes removed (enough for the documented commands: no escapes, no expansions). */
function words(command: string): string[] {
  return [...command.matchAll(/"([^"]*)"|'([^']*)'|(\S+)/g)].map((m) => m[1] ?? m[2] ?? m[3]!);
}

/** The `mmif` command and its arguments when the line runs mmif, as `npx mmif` or `npm run mmif --`. */
function mmifArgs(command: string): string[] | undefined {
  const w = words(command.slice(command.lastIndexOf('|') + 1).trim());
  if (w[0] === 'npx' && w[1] === 'mmif') return w.slice(2);
  const run = w.indexOf('mmif');
  if (w[0] === 'npm' && w[1] === 'run' && run > 0 && w[run + 1] === '--') return w.slice(run + 2);
  return undefined;
}

/** Commands that need a service the test does not run, each with why. Matched against the command. */
const SKIPPED: Array<[RegExp, string]> = [
  [/^npm install$/, 'the install step itself: this test runs after it'],
  [/^npm start$/, 'a full quickstart build into ./out of the checkout (with OPENAI_BASE_URL exported: a paid endpoint); test/e2e/buildLocal.test.ts runs `mmif quickstart`'],
  [/^npm test$/, 'the whole suite, this test included'],
  [/^npm run worker$/, 'a worker needs a Temporal server to poll; test/integration/temporalUnreachable.test.ts and the e2e tier run workers'],
  [
    /^npx mmif build --config build\.json --local$/,
    "build.json is the user's (ChartQA and ALLaVA releases, OpenAI with a key in the README; a dataset of their own in multiturn-and-eval.md); `build --local` runs as written on try.json above",
  ],
  [/^npx mmif (eval|resume|schedule) /, 'needs a running Temporal server with the build, or a model endpoint at localhost:8000; the e2e tier runs these against both'],
  [/^tools\/venv\/bin\/temporal /, 'needs a Temporal server (or starts one); its subcommand and flags are checked with --help'],
  [/^pip install -U huggingface_hub$/, 'installs from PyPI'],
  [/^hf (download|upload) /, 'needs the Hugging Face Hub (a download, or an account to upload to); its subcommand and flags are checked with --help'],
  [/^tools\/llama\.cpp\/bin\/llama-server /, 'needs a GGUF model downloaded from the Hub, and `tools/install.sh test` to build the server'],
  [/^npx mmif reward serve /, 'serves until stopped (started with &, it would outlive the test); test/e2e/rewardService.test.ts runs the service on a simulated build'],
  [/^curl -s localhost:8000\/healthz$/, 'asks the reward service above'],
  [
    /^python3 -m (verl\.trainer\.main_ppo|openrlhf\.cli\.train_ppo_ray) /,
    "needs GPUs, ray and a model from the Hub; test/rl/trainers.test.ts (npm run test:rl) runs TRL's GRPOTrainer, verl's RLHFDataset and reward loader, and OpenRLHF's reward client on CPU",
  ],
  [
    /^for i in 0 1 2 3; do$|^done$|^CUDA_VISIBLE_DEVICES=\$i (vllm serve|python -m sglang\.launch_server) /,
    'starts vLLM or SGLang replicas: needs GPUs and a model from the Hub; test/e2e/replicas.test.ts routes a build over three simulator replicas',
  ],
  [
    /^mkdir -p s3data\/mmif-bucket$|tools\/bin\/versitygw /,
    'serves S3 from a folder until stopped (versitygw comes with `tools/install.sh test`); test/harness/s3Server.ts runs it',
  ],
];

/** What a command the test runs must print and exit with. */
const RUN: Array<[RegExp, { code: number; output: RegExp }]> = [
  [/^npx mmif init --source cc3m=samples\/cc3m /, { code: 0, output: /^try\.json: ok \(build first-try: cc3m .*samples\/cc3m -> /m }],
  [/^npx mmif validate --config try\.json$/, { code: 0, output: /^try\.json: ok \(build first-try/m }],
  [/^npx mmif estimate --config try\.json --pilot 2 --local$/, { code: 0, output: /^full build \(the 4 samples the config asks for\): \d+ requests/m }],
  [/^npx mmif build --config try\.json --local$/, { code: 0, output: /^build first-try: \d+\/\d+ shards committed, 0 failed$/m }],
  [/^npx mmif status first-try$/, { code: 0, output: /^first-try done/m }],
  // The README's build.json as shown above the block: it parses, and its data is the user's to download.
  [/^npx mmif validate --config build\.json$/, { code: 2, output: /build\.json: sources\[0\] \(chartqa\): .*no ChartQA dataset found/ }],
  // docs/rl-rewards.md: the simulated quickstart build into ./out, then its RL exports.
  [/^npx mmif quickstart$/, { code: 0, output: /^dataset root: .*out\/quickstart-sim$/m }],
  [/^npx mmif export --output out --build-id quickstart-sim --format (verl|rlvr)$/, { code: 0, output: /^(verl|rlvr): \d+ rows$/m }],
  [/^echo .* \| npm run --silent mmif -- verify$/, { code: 0, output: /^\{"id":1,"passed":true,"vacuous":false\}$/m }],
];

const commands = documentedCommands();
let scratch: string;
/** The environment every documented command runs in: no endpoint, and a Temporal address nothing answers. */
const ENV: NodeJS.ProcessEnv = { ...process.env, TEMPORAL_ADDRESS: '127.0.0.1:9' };
for (const name of Object.keys(ENV)) if (/^(OPENAI_|MMIF_|TEMPORAL_(?!ADDRESS$))/.test(name)) delete ENV[name];
const run = promisify(execFile);

async function shell(command: string, options: { cwd: string; env?: Record<string, string> }): Promise<{ code: number; output: string }> {
  try {
    const { stdout, stderr } = await run('bash', ['-c', command], { cwd: options.cwd, env: { ...ENV, ...options.env }, maxBuffer: 16 << 20 });
    return { code: 0, output: stdout + stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, output: e.stdout + e.stderr };
  }
}

before(async () => {
  scratch = await mkdtemp(path.join(tmpdir(), 'mmif-documented-'));
  await symlink(path.join(ROOT, 'samples'), path.join(scratch, 'samples'));
});
after(async () => {
  if (scratch) await rm(scratch, { recursive: true, force: true });
});

test('the docs hold the commands this test knows: none is unaccounted for, and every rule still matches a command', () => {
  assert.ok(commands.length > 20, `${commands.length} commands found`);
  const unaccounted = commands.filter((c) => !RUN.some(([r]) => r.test(c.command)) && !SKIPPED.some(([r]) => r.test(c.command)));
  assert.deepEqual(
    unaccounted.map((c) => `${c.at}: ${c.command}`),
    [],
    'each documented command is run (RUN) or listed with why it is not (SKIPPED)',
  );
  for (const [rule] of [...RUN, ...SKIPPED])
    assert.ok(
      commands.some((c) => rule.test(c.command)),
      `no documented command matches ${rule}: a removed command?`,
    );
});

test('mmif is called as npx mmif or npm run mmif --, with a command and flags its --help names', async () => {
  const bare = commands.filter((c) => /(^|\|\s*)mmif\s/.test(c.command));
  assert.deepEqual(
    bare.map((c) => c.at),
    [],
    'a bare `mmif` is not on the PATH after npm install',
  );
  // npx resolves `mmif` in the checkout to its own bin (package.json "bin"), without the registry.
  const npx = await shell('npx --offline mmif --help', { cwd: ROOT });
  assert.equal(npx.code, 0, npx.output);
  const helps = new Map<string, string>();
  for (const c of commands) {
    const args = mmifArgs(c.command);
    if (!args) continue;
    const name = args[0]!;
    if (!helps.has(name)) {
      const help = await shell(`node ${BIN} ${name} --help`, { cwd: ROOT });
      assert.equal(help.code, 0, `${c.at}: mmif ${name} is not a command: ${help.output}`);
      helps.set(name, help.output);
    }
    for (const flag of args.filter((a) => a.startsWith('--')).map((a) => a.split('=')[0]!)) {
      assert.ok(new RegExp(`${flag}\\b`).test(helps.get(name)!), `${c.at}: mmif ${name} --help does not name ${flag}`);
    }
  }
});

/** The inline code spans of the prose (outside fenced blocks) that start with a bare `mmif `, as file:line and the span. */
function bareInlineMmif(): string[] {
  const bare: string[] = [];
  for (const file of DOCS) {
    let fenced = false;
    readFileSync(path.join(ROOT, file), 'utf8')
      .split('\n')
      .forEach((line, i) => {
        if (line.startsWith('```')) fenced = !fenced;
        else if (!fenced) for (const [span] of line.matchAll(/`mmif\s[^`]*`/g)) bare.push(`${file}:${i + 1}: ${span}`);
      });
  }
  return bare;
}

test('the prose names commands as they run too: no inline `mmif ...` span outside a fenced block', () => {
  assert.deepEqual(bareInlineMmif(), [], "write `npx mmif ...`, as the fenced commands and the CLI's own hints (cli/wording.ts mmifCommand) do");
});

test("the Temporal and Hub CLIs: the paths exist and each subcommand takes the documented flags (the CLI's own check)", async () => {
  const checked = commands.filter((c) => /^(tools\/venv\/bin\/temporal|hf) /.test(c.command));
  assert.ok(checked.length >= 8, `${checked.length} commands`);
  for (const c of checked) {
    const hf = c.command.startsWith('hf ');
    // `hf` is the user's (pip install huggingface_hub); the checkout's test tools hold one to check against.
    const command = hf ? `${path.join(ROOT, 'tools/venv/bin/hf')}${c.command.slice(2)}` : path.join(ROOT, c.command);
    if (hf && !existsSync(path.join(ROOT, 'tools/venv/bin/hf'))) assert.fail(`${c.at}: tools/venv/bin/hf is missing: run tools/install.sh test`);
    const help = await shell(`${command} --help`, { cwd: scratch });
    assert.equal(help.code, 0, `${c.at}: ${c.command} --help: ${help.output}`);
  }
});

test('the commands that need no outside service run as written, in order, with what they print', async () => {
  const runnable = commands.filter((c) => RUN.some(([r]) => r.test(c.command)));
  for (const c of runnable) {
    const [, expected] = RUN.find(([r]) => r.test(c.command))!;
    // A config the command reads is the JSON block shown above it (the README's build.json).
    if (/--config build\.json/.test(c.command)) {
      const json = /```json\n([\s\S]*?)\n```/.exec(c.above);
      assert.ok(json, `${c.at}: no build.json shown above the command`);
      await writeFile(path.join(scratch, 'build.json'), json[1]!);
    }
    const mmif = mmifArgs(c.command);
    // `npx mmif` is the checkout's bin (checked above); `npm run` runs in the checkout.
    const result = c.command.startsWith('npx mmif ')
      ? await shell(`node ${BIN} ${c.command.slice('npx mmif '.length)}`, { cwd: scratch, env: c.env })
      : await shell(c.command, { cwd: ROOT, env: c.env });
    assert.ok(mmif, c.at);
    assert.equal(result.code, expected.code, `${c.at}: ${c.command}\n${result.output}`);
    assert.match(result.output, expected.output, `${c.at}: ${c.command}`);
  }
});
