/**
 * What one execution of a slice read or wrote of its samples' stage states and staged images, kept
 * in memory for that execution only. Each stage of a sample reads the states it builds on and sends
 * the sample's image: without this, every stage read them from the store again (ADR 0080). A
 * sample's entries are dropped once it leaves the slice's stages, so the memo holds at most the
 * samples in flight; a new execution (a retry after a crash, a resume) starts with an empty one and
 * reads the store again. Only what this execution itself read from the store or wrote there is
 * kept, so it answers as the store would have answered this execution.
 */
import type { StageName } from '../../config/stages.js';
import type { StageState } from './stageState.js';

export class SliceMemo {
  private readonly states = new Map<string, Map<StageName, Promise<StageState | undefined>>>();
  /** By sha256, with the samples that use it: the same image is kept once for the samples in flight that send it. */
  private readonly images = new Map<string, { jpeg: Promise<Buffer>; users: Set<string> }>();

  /** The sample's state for `stage` as this execution read or wrote it, reading it with `read` the first time. */
  state(sampleId: string, stage: StageName, read: () => Promise<StageState | undefined>): Promise<StageState | undefined> {
    const states = this.statesOf(sampleId);
    const kept = states.get(stage);
    if (kept) return kept;
    const state = read();
    states.set(stage, state);
    state.catch(() => states.get(stage) === state && states.delete(stage)); // a failed read is not kept
    return state;
  }

  /** The state this execution just wrote, kept as a read of it would return it (a copy, fields set to undefined left out). */
  wrote(sampleId: string, stage: StageName, state: StageState): void {
    this.statesOf(sampleId).set(stage, Promise.resolve(JSON.parse(JSON.stringify(state)) as StageState));
  }

  /** The sample's image `sha256` as this execution read or stored it, reading it with `read` the first time. */
  image(sampleId: string, sha256: string, read: () => Promise<Buffer>): Promise<Buffer> {
    const kept = this.images.get(sha256);
    if (kept) return this.use(sampleId, sha256, kept).jpeg;
    const jpeg = read();
    const reading = this.use(sampleId, sha256, { jpeg, users: new Set() });
    jpeg.catch(() => this.images.get(sha256) === reading && this.images.delete(sha256)); // a failed read is not kept
    return jpeg;
  }

  /** The image this execution just stored for the sample. */
  storedImage(sampleId: string, sha256: string, jpeg: Buffer): void {
    this.use(sampleId, sha256, { jpeg: Promise.resolve(jpeg), users: this.images.get(sha256)?.users ?? new Set() });
  }

  /** Drops what was kept for a sample that left the slice's stages (an image another sample in flight uses stays). */
  forget(sampleId: string): void {
    this.states.delete(sampleId);
    for (const [sha256, kept] of this.images) if (kept.users.delete(sampleId) && kept.users.size === 0) this.images.delete(sha256);
  }

  /** How many samples and images are kept now (what the tests bound). */
  size(): { samples: number; images: number } {
    return { samples: this.states.size, images: this.images.size };
  }

  private use(sampleId: string, sha256: string, kept: { jpeg: Promise<Buffer>; users: Set<string> }) {
    kept.users.add(sampleId);
    this.images.set(sha256, kept);
    return kept;
  }

  private statesOf(sampleId: string): Map<StageName, Promise<StageState | undefined>> {
    let states = this.states.get(sampleId);
    if (!states) this.states.set(sampleId, (states = new Map()));
    return states;
  }
}
