/**
 * `mmif schedule describe` as a person reads it: the spec in cron's field order, the policies, the
 * state and the runs, one line each (`--json` prints the same facts as JSON). Temporal stores a
 * cron string as structured calendars (ScheduleSpecDescription.calendars: ranges per field, months
 * and weekdays by name, in @temporalio/client's schedule-types.d.ts), so a calendar is shown back in
 * cron's five fields, a field that matches every value as `*`.
 */
import type { CalendarSpecDescription, ScheduleDescription } from '@temporalio/client';

/** What `describe` shows of a schedule, as plain JSON. */
export function scheduleFacts(d: ScheduleDescription) {
  return {
    id: d.scheduleId,
    spec: d.spec,
    paused: d.state.paused,
    note: d.state.note,
    policies: d.policies,
    recentActions: d.info.recentActions.map((a) => ({ scheduledAt: a.scheduledAt, workflowId: a.action.workflow.workflowId })),
    nextActionTimes: d.info.nextActionTimes,
    runningWorkflows: d.info.runningActions.map((a) => a.workflow.workflowId),
  };
}

type Facts = ReturnType<typeof scheduleFacts>;
type Ranges = CalendarSpecDescription['minute'] | CalendarSpecDescription['month'] | CalendarSpecDescription['dayOfWeek'];

/** Each field's full span: a single range over it, step 1, is `*`. */
const FIELDS: Array<[keyof CalendarSpecDescription, unknown, unknown]> = [
  ['minute', 0, 59],
  ['hour', 0, 23],
  ['dayOfMonth', 1, 31],
  ['month', 'JANUARY', 'DECEMBER'],
  ['dayOfWeek', 'SUNDAY', 'SATURDAY'],
];

function field(ranges: Ranges, first: unknown, last: unknown): string {
  if (ranges.length === 0 || (ranges.length === 1 && ranges[0]!.start === first && ranges[0]!.end === last && ranges[0]!.step === 1)) return '*';
  return ranges.map((r) => `${r.start}${r.end === r.start ? '' : `-${r.end}`}${r.step === 1 ? '' : `/${r.step}`}`).join(',');
}

/** A calendar in cron's order (minute hour day-of-month month day-of-week), with its seconds and years when they are not the default. */
function calendarLine(c: CalendarSpecDescription): string {
  const cron = FIELDS.map(([name, first, last]) => field(c[name] as Ranges, first, last)).join(' ');
  const seconds = field(c.second, 0, 0) === '*' ? '' : `, second ${field(c.second, 0, 59)}`;
  const years = c.year.length ? `, year ${field(c.year, undefined, undefined)}` : '';
  return `${cron}${seconds}${years}${c.comment ? ` (${c.comment})` : ''}`;
}

const when = (t: Date) => t.toISOString();

/** Milliseconds as `--catchup-window` takes them: `1h`, `90m`, `45s`. */
function duration(ms: number): string {
  for (const [unit, size] of [
    ['d', 86_400_000],
    ['h', 3_600_000],
    ['m', 60_000],
  ] as const)
    if (ms >= size && ms % size === 0) return `${ms / size}${unit}`;
  return `${ms / 1000}s`;
}

export function formatSchedule(f: Facts): string {
  const spec = [
    ...(f.spec.calendars ?? []).map((c) => `calendar ${calendarLine(c)}`),
    ...(f.spec.intervals ?? []).map((i) => `every ${i.every}${i.offset ? ` offset ${i.offset}` : ''}`),
  ];
  const lines = [
    `schedule ${f.id}: ${f.paused ? 'paused' : 'active'}${f.note ? ` (note: ${f.note})` : ''}`,
    `  when:     ${spec.join('; ') || '(no times)'} in ${f.spec.timezone || 'UTC'}`,
    `  overlap:  ${(f.policies.overlap ?? 'skip').toLowerCase()}, catch-up window ${duration(f.policies.catchupWindow)}${f.policies.pauseOnFailure ? ', pauses on failure' : ''}`,
    `  next:     ${f.nextActionTimes.slice(0, 3).map(when).join(', ') || '-'}`,
    `  recent:   ${f.recentActions.map((a) => `${when(a.scheduledAt)} ${a.workflowId}`).join(', ') || '-'}`,
    `  running:  ${f.runningWorkflows.join(', ') || '-'}`,
  ];
  return lines.join('\n');
}
