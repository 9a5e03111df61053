/**
 * Finds one member of a tar by byte ranges without walking every header from the start, when the
 * tar's record order is known: img2dataset writes a tar's records in the order of its parquet side
 * file's `success` rows. Interpolation search on that order: guess the offset from the record's
 * ordinal, read a window there, find the first valid header in it (sources/readers/tar.ts ustarHeaderAt),
 * follow the header chain inside the window, and narrow the bounds by the ordinals found. A few
 * windows per member instead of the whole tar (real CC3M images are smaller than a window, so a walk
 * from the start reads every byte). Anything unexpected (no header, an unknown record, a pax or GNU
 * long-name member, damage, too many windows) gives undefined, and the caller walks the tar instead.
 */
import { ustarHeaderAt } from './tar.js';

const BLOCK = 512;
/** A CC3M record at img2dataset's 256 px is ~10-30 KB: a window usually holds the target and the record before. */
const WINDOW = 64 * 1024;
/** A window that falls inside one member (a large image) is read again, twice as large, up to this. */
const MAX_WINDOW = 4 * 1024 * 1024;
const MAX_WINDOWS = 12;

export interface SeekTarget {
  /** Position of the member's record in the tar's record order. */
  ordinal: number;
  /** Whether a member path is the wanted member of that record (e.g. its image). */
  isWanted: (path: string) => boolean;
}

export interface TarOrder {
  /** Record key -> position in the tar's record order. */
  ordinals: ReadonlyMap<string, number>;
  /** Records in the tar. */
  count: number;
  /** The record key of a member path (`000012345.jpg` -> `000012345`). */
  recordOf: (path: string) => string;
}

/** Byte range [start, end) of the wanted member's data, or undefined when seeking did not find it. */
export async function seekTarMember(
  readRange: (start: number, end: number) => Promise<Buffer>,
  size: number,
  order: TarOrder,
  target: SeekTarget,
): Promise<[number, number] | undefined> {
  const reader = new Windows(readRange, size);
  // 1. Interpolate for a header of an earlier record (the wanted member may come before any other
  // member of its own record, so the walk must start before the record). Invariants: `lo` is a
  // header with an ordinal below the target (or the tar's start), `hi` one at or above it.
  let lo = { offset: 0, ordinal: -1 };
  let hi = { offset: size, ordinal: order.count };
  while (reader.reads < MAX_WINDOWS) {
    if (target.ordinal <= lo.ordinal || target.ordinal > hi.ordinal || hi.offset <= lo.offset) return undefined;
    // The window is centred on the target's estimated offset, so it most likely opens on an
    // earlier record and holds the target's members too.
    const share = (target.ordinal - lo.ordinal) / (hi.ordinal - lo.ordinal);
    const estimate = lo.offset + (hi.offset - lo.offset) * share - reader.bytes / 2;
    const guess = lo.offset + Math.max(0, Math.floor((estimate - lo.offset) / BLOCK) * BLOCK);
    if (guess === lo.offset) break; // close enough: walk from lo
    const window = await reader.window(guess);
    let at = firstHeader(window.bytes, order);
    if (at === undefined) {
      if (window.start + window.bytes.length >= size || !reader.widen()) return undefined;
      continue;
    }
    const first = member(window.bytes, at, order);
    if (!first) return undefined;
    if (first.ordinal >= target.ordinal) {
      // No member starts between the window's start and this header, so none before it in the
      // window is of an earlier record either: the window's start bounds the search from above.
      hi = { offset: window.start, ordinal: first.ordinal };
      continue;
    }
    // Walk on inside the window while the records are earlier than the target.
    let current = first;
    for (;;) {
      lo = { offset: window.start + at, ordinal: current.ordinal };
      at += BLOCK + Math.ceil(current.size / BLOCK) * BLOCK;
      const next = at + BLOCK <= window.bytes.length ? member(window.bytes, at, order) : undefined;
      if (!next || next.ordinal >= target.ordinal) break;
      current = next;
    }
    if (at + BLOCK <= window.bytes.length) break; // the next member is at or past the target: walk from lo
  }
  if (reader.reads >= MAX_WINDOWS) return undefined;
  // 2. Walk the header chain from `lo` through the target record's members.
  let offset = lo.offset;
  while (reader.reads < MAX_WINDOWS) {
    const window = await reader.window(offset, true);
    let at = offset - window.start;
    while (at + BLOCK <= window.bytes.length) {
      const found = member(window.bytes, at, order);
      if (!found || found.ordinal > target.ordinal) return undefined;
      const dataStart = window.start + at + BLOCK;
      if (found.ordinal === target.ordinal && target.isWanted(found.path)) {
        return dataStart + found.size <= size ? [dataStart, dataStart + found.size] : undefined;
      }
      at += BLOCK + Math.ceil(found.size / BLOCK) * BLOCK;
    }
    offset = window.start + at;
    if (offset >= size) return undefined;
  }
  return undefined;
}

/** A regular member's header at `at` of a known record, with its record's ordinal. */
function member(bytes: Buffer, at: number, order: TarOrder): { path: string; size: number; ordinal: number } | undefined {
  const header = ustarHeaderAt(bytes.subarray(at, at + BLOCK));
  if (!header || (header.type !== '0' && header.type !== '\0') || !(header.size >= 0)) return undefined;
  const ordinal = order.ordinals.get(order.recordOf(header.path));
  return ordinal === undefined ? undefined : { path: header.path, size: header.size, ordinal };
}

/** Offset in the window of its first block that is a valid header of a known record. */
function firstHeader(window: Buffer, order: TarOrder): number | undefined {
  for (let at = 0; at + BLOCK <= window.length; at += BLOCK) if (member(window, at, order)) return at;
  return undefined;
}

/** Windows of the tar read by range, counted; walking on, the last one is reused while it holds the next header. */
class Windows {
  reads = 0;
  bytes = WINDOW;
  private last?: { start: number; bytes: Buffer };

  constructor(
    private readonly readRange: (start: number, end: number) => Promise<Buffer>,
    private readonly size: number,
  ) {}

  async window(start: number, reuse = false): Promise<{ start: number; bytes: Buffer }> {
    if (reuse && this.last && start >= this.last.start && start + BLOCK <= this.last.start + this.last.bytes.length) return this.last;
    this.reads++;
    this.last = { start, bytes: await this.readRange(start, Math.min(this.size, start + this.bytes)) };
    return this.last;
  }

  /** Doubles the window; false when it is already the largest. */
  widen(): boolean {
    if (this.bytes >= MAX_WINDOW) return false;
    this.bytes *= 2;
    return true;
  }
}
