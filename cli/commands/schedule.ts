/** `mmif schedule`: creates and manages Temporal schedules that run a build on a cron spec. */
import { parseFlags } from '../../config/commandFlags.js';
import { ScheduleNotFoundError, ScheduleOverlapPolicy } from '@temporalio/client';
import { CliError, EXIT } from '../exitCodes.js';
import { connectTemporal } from '../temporalClient.js';
import { readConfig } from '../configFile.js';
import { formatSchedule, scheduleFacts } from '../scheduleDescription.js';

export const SCHEDULE_USAGE = `usage: mmif schedule <create|list|describe|pause|unpause|trigger|backfill|delete> ...
  create <id> --config FILE --cron EXPR [--overlap skip|buffer_one|allow_all|cancel_other|terminate_other]
              [--catchup-window DURATION] [--paused]
      A schedule that runs the build (workflow type scheduledBuild) on the cron spec (UTC). Each run
      writes under <output>/<YYYY-MM-DD>/<buildId>/ for its nominal time and shares the model-call
      cache of <output>, so unchanged samples cost nothing. Overlap default: skip; catch-up window
      default: 1h (runs missed for longer, e.g. while the server was down, are not made up).
  list                      all schedules
  describe <id> [--json]    spec, policies, state, recent and next runs (--json: as JSON)
  pause <id> [--note TEXT]  / unpause <id> [--note TEXT]
  trigger <id>              run now (the overlap policy applies)
  backfill <id> --start ISO --end ISO   run every action the spec had in [start, end), dated accordingly
  delete <id>`;

const OVERLAP = {
  skip: ScheduleOverlapPolicy.SKIP,
  buffer_one: ScheduleOverlapPolicy.BUFFER_ONE,
  allow_all: ScheduleOverlapPolicy.ALLOW_ALL,
  cancel_other: ScheduleOverlapPolicy.CANCEL_OTHER,
  terminate_other: ScheduleOverlapPolicy.TERMINATE_OTHER,
} as const;

export async function scheduleCommand(args: string[]): Promise<number> {
  const [action, ...rest] = args;
  const { values, positionals } = parseFlags({
    args: rest,
    allowPositionals: true,
    options: {
      config: { type: 'string' },
      cron: { type: 'string' },
      overlap: { type: 'string', default: 'skip' },
      'catchup-window': { type: 'string', default: '1h' },
      paused: { type: 'boolean' },
      note: { type: 'string' },
      start: { type: 'string' },
      end: { type: 'string' },
      json: { type: 'boolean' },
    },
  });
  const id = positionals[0];
  if (!action || (action !== 'list' && !id)) throw new CliError(SCHEDULE_USAGE, EXIT.usage);
  const temporal = await connectTemporal();
  try {
    const schedules = temporal.client.schedule;
    const handle = () => schedules.getHandle(id!);
    switch (action) {
      case 'create': {
        if (!values.config || !values.cron) throw new CliError(SCHEDULE_USAGE, EXIT.usage);
        const overlap = OVERLAP[values.overlap as keyof typeof OVERLAP];
        if (!overlap) throw new CliError(`unknown --overlap '${values.overlap}'`, EXIT.usage);
        const config = await readConfig(values.config);
        const cron = values.cron;
        await createSchedule(cron, () =>
          schedules.create({
            scheduleId: id!,
            spec: { cronExpressions: [cron] },
            action: {
              type: 'startWorkflow',
              workflowType: 'scheduledBuild',
              taskQueue: temporal.settings.taskQueue,
              workflowId: `${config.buildId}-scheduled`,
              args: [config],
            },
            policies: { overlap, catchupWindow: values['catchup-window'] as `${number}h` },
            state: { paused: values.paused ?? false },
          }),
        );
        console.log(`created schedule ${id} (${values.cron}, overlap ${values.overlap}, catch-up window ${values['catchup-window']})`);
        return EXIT.ok;
      }
      case 'list':
        for await (const s of schedules.list()) {
          console.log(`${s.scheduleId}  ${s.state.paused ? 'paused' : 'active'}  next: ${s.info.nextActionTimes[0]?.toISOString() ?? '-'}`);
        }
        return EXIT.ok;
      case 'describe': {
        const facts = scheduleFacts(await withSchedule(id!, () => handle().describe()));
        console.log(values.json ? JSON.stringify(facts, null, 2) : formatSchedule(facts));
        return EXIT.ok;
      }
      case 'pause':
        await withSchedule(id!, () => handle().pause(values.note));
        console.log(`paused ${id}`);
        return EXIT.ok;
      case 'unpause':
        await withSchedule(id!, () => handle().unpause(values.note));
        console.log(`unpaused ${id}`);
        return EXIT.ok;
      case 'trigger':
        await withSchedule(id!, () => handle().trigger());
        console.log(`triggered ${id}`);
        return EXIT.ok;
      case 'backfill': {
        if (!values.start || !values.end) throw new CliError(SCHEDULE_USAGE, EXIT.usage);
        const [start, end] = [new Date(values.start), new Date(values.end)];
        if (Number.isNaN(start.getTime()) || Number.isNaN(end.getTime())) throw new CliError('--start and --end must be ISO dates', EXIT.usage);
        await withSchedule(id!, () => handle().backfill({ start, end, overlap: ScheduleOverlapPolicy.ALLOW_ALL }));
        console.log(`backfilling ${id} from ${start.toISOString()} to ${end.toISOString()}`);
        return EXIT.ok;
      }
      case 'delete':
        await withSchedule(id!, () => handle().delete());
        console.log(`deleted ${id}`);
        return EXIT.ok;
      default:
        throw new CliError(`unknown schedule action '${action}'\n${SCHEDULE_USAGE}`, EXIT.usage);
    }
  } finally {
    await temporal.close();
  }
}

/**
 * The server checks the spec; the SDK turns its INVALID_ARGUMENT "Invalid schedule spec: ..." into a
 * TypeError with the server's reason (ScheduleClient.create in @temporalio/client): a usage error.
 */
async function createSchedule(cron: string, create: () => Promise<unknown>): Promise<void> {
  try {
    await create();
  } catch (err) {
    if (err instanceof TypeError) throw new CliError(`invalid schedule spec: ${err.message} (--cron '${cron}')`, EXIT.usage);
    throw err;
  }
}

async function withSchedule<T>(id: string, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (err instanceof ScheduleNotFoundError) throw new CliError(`no schedule '${id}'`, EXIT.notFound);
    throw err;
  }
}
