/**
 * The Parquet files of a Hugging Face dataset as downloaded: the default config's
 * `data/<split>-NNNNN-of-NNNNN[-<hash>].parquet`, a named config's `<config>/<split>-NNNNN-of-NNNNN.parquet`
 * (LLaVA-OneVision-Data's `geo170k(qa)/train-00000-of-00001.parquet`), the Hub's converted
 * `<config>/<split>/NNNN.parquet`, or any `.parquet` under the root (its split is its stem). The file
 * naming is `datasets`' (https://huggingface.co/docs/datasets/repository_structure: "data files
 * named `<split>-xxxxx-of-xxxxx`"); a root inside the Hub cache (`datasets--<org>--<name>/snapshots/<rev>/`,
 * https://huggingface.co/docs/huggingface_hub/guides/manage-cache) names the repository and revision.
 */
import type { ObjectStore } from '../../storage/objectStore.js';

export interface HfParquetFile {
  key: string;
  size: number;
  split: string;
  /** `default` for `data/` and the root. */
  config: string;
}

/** Which files to read: all when a list is empty; a config ending in `*` keeps every config starting so (`allava*`). */
export interface HfFileFilter {
  splits?: readonly string[];
  configs?: readonly string[];
}

/** The split and config a file's key says it holds. */
export function splitAndConfig(key: string): { split: string; config: string } {
  const parts = key.split('/');
  const name = parts.at(-1)!.replace(/\.parquet$/i, '');
  const folders = parts.slice(0, -1);
  const sharded = /^(.+?)-\d{5}-of-\d{5}(?:-[0-9a-f]+)?$/.exec(name);
  let split: string;
  if (sharded) split = sharded[1]!;
  else if (/^\d+$/.test(name) && folders.length > 0) split = folders.pop()!.replace(/^partial-/, '');
  else split = name;
  const config = folders.length === 0 || folders[0] === 'data' ? 'default' : folders[0]!;
  return { split, config };
}

/** Every `.parquet` under the root that the filter keeps, in key order; `none` says what the root holds when it keeps none. */
export async function hfParquetFiles(store: ObjectStore, filter: HfFileFilter = {}): Promise<{ files: HfParquetFile[]; none?: string }> {
  const all: HfParquetFile[] = [];
  for await (const object of store.list('')) {
    if (object.key.toLowerCase().endsWith('.parquet')) all.push({ key: object.key, size: object.size, ...splitAndConfig(object.key) });
  }
  const keep = (wanted: readonly string[] | undefined, value: string) =>
    !wanted || wanted.length === 0 || wanted.some((w) => w === value || (w.endsWith('*') && value.startsWith(w.slice(0, -1))));
  const files = all.filter((f) => keep(filter.splits, f.split) && keep(filter.configs, f.config));
  if (files.length > 0) return { files };
  if (all.length === 0) return { files, none: 'no .parquet file under the root' };
  const held = [...new Set(all.map((f) => (f.config === 'default' ? f.split : `${f.config}/${f.split}`)))].join(', ');
  return { files, none: `no .parquet file of ${describeFilter(filter)}: the root holds ${held}` };
}

function describeFilter(filter: HfFileFilter): string {
  const parts = [];
  if (filter.configs?.length) parts.push(`config ${filter.configs.join(' or ')}`);
  if (filter.splits?.length) parts.push(`split ${filter.splits.join(' or ')}`);
  return parts.join(', ');
}

/** The repository and revision of a root inside the Hugging Face cache, undefined elsewhere. */
export function hubSnapshot(root: string): { repo: string; revision: string } | undefined {
  const match = /(?:^|\/)datasets--([^/]+?)--([^/]+)\/snapshots\/([0-9a-f]{40})(?:\/|$)/.exec(root);
  return match ? { repo: `${match[1]}/${match[2]}`, revision: match[3]! } : undefined;
}
