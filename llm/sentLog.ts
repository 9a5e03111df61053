/**
 * Which requests the stage executions of one slice sent: a line per request, appended as it leaves
 * the limiter, so an execution that retries a killed one can tell a request that was lost in flight
 * (sent, its reply never cached) from one never sent. One append-only log per slice (ObjectStore
 * appendLine) rather than a file per request (docs/adr/0011-small-writes-per-model-call.md).
 */
import type { ObjectStore } from '../storage/objectStore.js';
import { attemptSlot } from './attemptSlot.js';

/** Who sent a request: the build (owner) and the execution of a stage of a sample (scope). */
export interface SentMark {
  owner?: string;
  scope: string;
  execution: string;
}

/** A request sent, or (`answered`) one answered with an error status: an answer, not a billed loss. */
interface Line extends SentMark {
  key: string;
  answered?: true;
}

export class SentLog {
  /** Lines written before this log was first read: by earlier executions (and this one's, none yet). */
  private earlier?: Promise<Map<string, Line[]>>;

  constructor(
    private readonly store: ObjectStore,
    private readonly key: string,
  ) {}

  /** Appended before the request with cache key `key` is sent. */
  async sent(key: string, mark: SentMark): Promise<void> {
    const slot = attemptSlot();
    await this.append({ key, ...mark });
    slot?.stamp('marked');
  }

  /** The request was answered with an error status: not lost in flight. */
  answered(key: string, mark: SentMark): Promise<void> {
    return this.append({ key, ...mark, answered: true });
  }

  /**
   * Whether another execution of `mark`'s scope and build sent `key` and never saw it answered:
   * when the cache has no reply for it, that execution died with the request in flight.
   */
  async sentByAnother(key: string, mark: SentMark): Promise<boolean> {
    const lines = (await (this.earlier ??= this.load())).get(key) ?? [];
    const others = lines.filter((l) => l.owner === mark.owner && l.scope === mark.scope && l.execution !== mark.execution);
    const answered = new Set(others.filter((l) => l.answered).map((l) => l.execution));
    return others.some((l) => !answered.has(l.execution));
  }

  private append(line: Line): Promise<void> {
    return this.store.appendLine(this.key, JSON.stringify(line));
  }

  private async load(): Promise<Map<string, Line[]>> {
    const byKey = new Map<string, Line[]>();
    for (const text of await this.store.readLines(this.key)) {
      const line = JSON.parse(text) as Line;
      const lines = byKey.get(line.key);
      if (lines) lines.push(line);
      else byKey.set(line.key, [line]);
    }
    return byKey;
  }
}
