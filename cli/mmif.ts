#!/usr/bin/env node
/**
 * The `mmif` command: one subcommand per module under cli/commands/. `mmif <command> --help`
 * prints a command's usage. Exit codes: cli/exitCodes.ts.
 */
import { CliError, EXIT, EXIT_MEANING, exitCodesLine } from './exitCodes.js';
import { InputError } from '../domain/errors.js';

interface Command {
  usage: string;
  run: (args: string[]) => Promise<number>;
}

/**
 * Each command's module is imported only when that command runs: `mmif verify` then never loads the
 * Temporal, AWS and sharp stacks, which took ~2 s of its start-up.
 */
const COMMANDS: Record<string, { summary: string; load: () => Promise<Command> }> = {
  build: {
    summary: 'start a build from a config file (optionally wait with live progress)',
    load: async () => import('./commands/build.js').then((m) => ({ usage: m.BUILD_USAGE, run: m.buildCommand })),
  },
  estimate: {
    summary: "forecast a build's requests, tokens, cost and wall time from a pilot of its first samples",
    load: async () => import('./commands/estimate.js').then((m) => ({ usage: m.ESTIMATE_USAGE, run: m.estimateCommand })),
  },
  init: {
    summary: 'write a starter build config, from flags or by asking',
    load: async () => import('./commands/init.js').then((m) => ({ usage: m.INIT_USAGE, run: m.initCommand })),
  },
  schema: {
    summary: "print the build config's JSON Schema (for editors)",
    load: async () => import('./commands/schema.js').then((m) => ({ usage: m.SCHEMA_USAGE, run: m.schemaCommand })),
  },
  validate: {
    summary: 'check a config, its fingerprint against an existing build and its sources, starting nothing',
    load: async () => import('./commands/validate.js').then((m) => ({ usage: m.VALIDATE_USAGE, run: m.validateCommand })),
  },
  status: {
    summary: "show or --watch a build's progress",
    load: async () => import('./commands/status.js').then((m) => ({ usage: m.STATUS_USAGE, run: m.statusCommand })),
  },
  resume: {
    summary: 'retry the failed shards of a build',
    load: async () => import('./commands/resume.js').then((m) => ({ usage: m.RESUME_USAGE, run: m.resumeCommand })),
  },
  cancel: {
    summary: 'cancel a build (committed shards stay valid)',
    load: async () => import('./commands/cancel.js').then((m) => ({ usage: m.CANCEL_USAGE, run: m.cancelCommand })),
  },
  schedule: {
    summary: 'nightly builds: create, list, describe, pause, unpause, trigger, backfill, delete',
    load: async () => import('./commands/schedule.js').then((m) => ({ usage: m.SCHEDULE_USAGE, run: m.scheduleCommand })),
  },
  inspect: {
    summary: 'print samples of a shard in readable form',
    load: async () => import('./commands/inspect.js').then((m) => ({ usage: m.INSPECT_USAGE, run: m.inspectCommand })),
  },
  export: {
    summary: 'write TRL rows or an MM-IFEval held-out split from a build',
    load: async () => import('./commands/export.js').then((m) => ({ usage: m.EXPORT_USAGE, run: m.exportCommand })),
  },
  eval: {
    summary: 'score an OpenAI-compatible endpoint on a held-out split (MM-IFEval accuracies)',
    load: async () => import('./commands/eval.js').then((m) => ({ usage: m.EVAL_USAGE, run: m.evalCommand })),
  },
  view: {
    summary: "write or serve an HTML page showing a build's samples with their images",
    load: async () => import('./commands/view.js').then((m) => ({ usage: m.VIEW_USAGE, run: m.viewCommand })),
  },
  reward: {
    summary: "serve rewards for RL runs: a build's ground truths, its verifiers and judge (OpenRLHF's protocol too)",
    load: async () => import('./commands/reward.js').then((m) => ({ usage: m.REWARD_USAGE, run: m.rewardCommand })),
  },
  verify: {
    summary: 'run the reference rule verifiers over JSON lines (stdin -> stdout)',
    load: async () => import('../verification/verifyCommand.js').then((m) => ({ usage: m.VERIFY_USAGE, run: (args) => m.runVerifyCommand(args, process.stdin, process.stdout) })),
  },
  worker: {
    summary: 'run a worker (TEMPORAL_* settings from the environment)',
    load: async () => import('./commands/worker.js').then((m) => ({ usage: m.WORKER_USAGE, run: m.workerCommand })),
  },
  doctor: {
    summary: 'check what a worker needs: Temporal and its namespace, pollers, endpoints, output, metrics, tools',
    load: async () => import('./commands/doctor.js').then((m) => ({ usage: m.DOCTOR_USAGE, run: m.doctorCommand })),
  },
  quickstart: {
    summary: 'local dev server + worker + simulator: build the bundled samples (npm start)',
    load: async () => import('./commands/quickstart.js').then((m) => ({ usage: m.QUICKSTART_USAGE, run: m.quickstartCommand })),
  },
  simulator: {
    summary: 'serve the OpenAI-compatible simulator',
    load: async () => import('./commands/simulator.js').then((m) => ({ usage: m.SIMULATOR_USAGE, run: m.simulatorCommand })),
  },
};

const USAGE = `usage: mmif <command> [options]   (mmif <command> --help for details)

commands:
${Object.entries(COMMANDS)
  .map(([name, c]) => `  ${name.padEnd(11)} ${c.summary}`)
  .join('\n')}

${exitCodesLine(EXIT_MEANING)}
`;

async function main(argv: string[]): Promise<number> {
  const [name, ...args] = argv;
  if (name === undefined || name === 'help' || name === '--help' || name === '-h') {
    process.stdout.write(USAGE);
    return name === undefined ? EXIT.usage : EXIT.ok;
  }
  const entry = COMMANDS[name];
  if (!entry) {
    process.stderr.write(`mmif: unknown command '${name}'\n${USAGE}`);
    return EXIT.usage;
  }
  const command = await entry.load();
  if (args.includes('--help') || args.includes('-h')) {
    process.stdout.write(`${command.usage}\n`);
    return EXIT.ok;
  }
  return command.run(args);
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    if (err instanceof CliError) {
      console.error(`mmif: ${err.message}`);
      process.exit(err.exitCode);
    }
    // An input error (a bad config or environment variable, ...) exits as a build failing for one does (cli/failures.ts).
    const usageError = err instanceof InputError || (err instanceof TypeError && (err as NodeJS.ErrnoException).code?.startsWith('ERR_PARSE_ARGS'));
    console.error(`mmif: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(usageError ? EXIT.usage : EXIT.failed);
  },
);
