#!/usr/bin/env node
/**
 * The `mmif` command: one subcommand per module under cli/commands/. `mmif <command> --help`
 * prints a command's usage. Exit codes: 0 ok, 1 failed, 2 usage or config error, 3 not found.
 */
import { BUILD_USAGE, buildCommand } from './commands/build.js';
import { CANCEL_USAGE, cancelCommand } from './commands/cancel.js';
import { INSPECT_USAGE, inspectCommand } from './commands/inspect.js';
import { QUICKSTART_USAGE, quickstartCommand } from './commands/quickstart.js';
import { RESUME_USAGE, resumeCommand } from './commands/resume.js';
import { SCHEDULE_USAGE, scheduleCommand } from './commands/schedule.js';
import { SIMULATOR_USAGE, simulatorCommand } from './commands/simulator.js';
import { STATUS_USAGE, statusCommand } from './commands/status.js';
import { WORKER_USAGE, workerCommand } from './commands/worker.js';
import { runVerifyCommand, VERIFY_USAGE } from '../verification/verifyCommand.js';
import { CliError, EXIT } from './exitCodes.js';

const COMMANDS: Record<string, { summary: string; usage: string; run: (args: string[]) => Promise<number> }> = {
  build: { summary: 'start a build from a config file (optionally wait with live progress)', usage: BUILD_USAGE, run: buildCommand },
  status: { summary: 'show or --watch a build\'s progress', usage: STATUS_USAGE, run: statusCommand },
  resume: { summary: 'retry the failed shards of a build', usage: RESUME_USAGE, run: resumeCommand },
  cancel: { summary: 'cancel a build (committed shards stay valid)', usage: CANCEL_USAGE, run: cancelCommand },
  schedule: { summary: 'nightly builds: create, list, describe, pause, unpause, trigger, backfill, delete', usage: SCHEDULE_USAGE, run: scheduleCommand },
  inspect: { summary: 'print samples of a shard in readable form', usage: INSPECT_USAGE, run: inspectCommand },
  verify: { summary: 'run the reference rule verifiers over JSON lines (stdin -> stdout)', usage: VERIFY_USAGE, run: (args) => runVerifyCommand(args, process.stdin, process.stdout) },
  worker: { summary: 'run a worker (TEMPORAL_* settings from the environment)', usage: WORKER_USAGE, run: workerCommand },
  quickstart: { summary: 'local dev server + worker + simulator: build the bundled samples (npm start)', usage: QUICKSTART_USAGE, run: quickstartCommand },
  simulator: { summary: 'serve the OpenAI-compatible simulator', usage: SIMULATOR_USAGE, run: simulatorCommand },
};

const USAGE = `usage: mmif <command> [options]   (mmif <command> --help for details)

commands:
${Object.entries(COMMANDS)
  .map(([name, c]) => `  ${name.padEnd(11)} ${c.summary}`)
  .join('\n')}

exit codes: 0 ok, 1 failed, 2 usage or config error, 3 no such build or schedule
`;

async function main(argv: string[]): Promise<number> {
  const [name, ...args] = argv;
  if (name === undefined || name === 'help' || name === '--help' || name === '-h') {
    process.stdout.write(USAGE);
    return name === undefined ? EXIT.usage : EXIT.ok;
  }
  const command = COMMANDS[name];
  if (!command) {
    process.stderr.write(`mmif: unknown command '${name}'\n${USAGE}`);
    return EXIT.usage;
  }
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
    const usageError = err instanceof TypeError && (err as NodeJS.ErrnoException).code?.startsWith('ERR_PARSE_ARGS');
    console.error(`mmif: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(usageError ? EXIT.usage : EXIT.failed);
  },
);
