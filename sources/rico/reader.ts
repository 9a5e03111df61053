/**
 * RICO unique UIs (interactionmining.org) as unpacked: `combined/<N>.jpg` screenshots (any image
 * format the image stage handles is listed too, so none is skipped without a record) beside
 * `combined/<N>.json` view hierarchies; the root is the folder holding `combined/` or `combined/`
 * itself. `semantic_annotations/` holds wireframe renderings, not screenshots, and is never read.
 * RICO has no questions: instructions are generated, and the text visible on the screen (from the
 * hierarchy) is the grounding.
 */
import type { SourceConfigOf } from '../../config/sourceConfig.js';
import type { ObjectStore } from '../../storage/objectStore.js';
import { sourceStore } from '../readers/extractedView.js';
import type { S3Options } from '../../storage/s3Store.js';
import { SourceError, inSegments, damaged, locatorField, readStored, sourceSample, type SourceItem, type SourceReader } from '../contract.js';
import { pathLocator } from '../readers/namedImages.js';
import { hasParquetFiles, parquetImages } from '../readers/hfRows.js';
import { ricoHubItems } from './hub.js';
import { visibleText } from './screenText.js';
import { IMAGE_EXTENSIONS } from '../readers/datasetPath.js';
import { asObject, describeRoot } from '../readers/jsonFiles.js';
import { orderedMap } from '../readers/orderedMap.js';
import { decodeUtf8, encodingReason } from '../readers/utf8.js';
import { unreadableFile } from '../readers/unreadableFiles.js';

const SCREENS = 'combined';
const WIREFRAMES = 'semantic_annotations';
/** Screens whose hierarchy is fetched ahead (a GET each). */
const READ_AHEAD = 16;

const EXPECTED =
  `expected the RICO layout: '${SCREENS}/<N>.jpg' screenshots with '${SCREENS}/<N>.json' view hierarchies; ` +
  `the root is the folder holding '${SCREENS}/' or that folder itself ('semantic_annotations/' wireframes are not screenshots)`;

export function open(config: SourceConfigOf<'rico'>, sourceIndex: number, s3: S3Options): SourceReader {
  const store = sourceStore(config.uri, s3);
  const rows = parquetImages(store);
  return {
    segments: () => inSegments(ricoSamples(store, config, sourceIndex)),
    readImage: (ref) => ('row' in ref.locator ? rows.read(ref.locator) : readStored(store, { key: locatorField(ref.locator, 'path', 'string') })),
    origin: (locator) => ('row' in locator ? rows.origin(locator) : { file: locatorField(locator, 'path', 'string') }),
    describe: async () =>
      (await layoutOf(store, config)) === 'hub'
        ? 'RICO-Screen2Words Parquet (screenshots inside, view_hierarchy as grounding)'
        : `screenshots and view hierarchies in '${(await screensDir(store)) || '.'}'`,
  };
}

/** One screen: the files sharing a stem. */
interface Screen {
  stem: string;
  image?: string;
  hierarchy?: string;
  /** A file of the screen listed but not readable (ObjectInfo.unreadable), with why. */
  unreadable?: { key: string; why: string };
}

async function* ricoSamples(store: ObjectStore, config: SourceConfigOf<'rico'>, sourceIndex: number): AsyncGenerator<SourceItem> {
  refuseWireframes(config.uri);
  if ((await layoutOf(store, config)) === 'hub') {
    yield* ricoHubItems(store, config, sourceIndex);
    return;
  }
  const dir = await screensDir(store);
  yield* orderedMap(screens(store, dir), READ_AHEAD, (screen) => toItem(screen, store, config, sourceIndex));
}

/** The layout the config names, or the one the root holds: the release's `combined/` first. */
async function layoutOf(store: ObjectStore, config: SourceConfigOf<'rico'>): Promise<'release' | 'hub'> {
  if (config.layout !== 'auto') return config.layout;
  try {
    await screensDir(store);
    return 'release';
  } catch (err) {
    if (err instanceof SourceError && (await hasParquetFiles(store, {}))) return 'hub';
    throw err;
  }
}

/** The wireframe folder holds PNG renderings that would otherwise be read as screenshots without complaint. */
function refuseWireframes(uri: string): void {
  const last = uri
    .replace(/[/\\]+$/, '')
    .split(/[/\\]/)
    .pop();
  if (last === WIREFRAMES) {
    throw new SourceError(uri, `'${WIREFRAMES}/' holds RICO's wireframe renderings, not screenshots; point uri at the folder holding '${SCREENS}/' (${EXPECTED})`);
  }
}

/** `combined/` when the root holds it, '' when the root is that folder (screenshots at the top level). */
async function screensDir(store: ObjectStore): Promise<string> {
  for await (const { key } of store.list(`${SCREENS}/`)) if (kindOf(key.slice(SCREENS.length + 1)) === 'image') return `${SCREENS}/`;
  for await (const { key } of store.list('')) if (kindOf(key) === 'image') return '';
  throw new SourceError(store.root, `no RICO screenshots found (${await describeRoot(store)}); ${EXPECTED}`);
}

function kindOf(name: string): 'image' | 'hierarchy' | undefined {
  if (name.includes('/') || name.indexOf('.') <= 0) return undefined;
  const ext = name.slice(name.lastIndexOf('.') + 1).toLowerCase();
  return IMAGE_EXTENSIONS.has(ext) ? 'image' : ext === 'json' ? 'hierarchy' : undefined;
}

/** Screens in listing order. A stem's files are adjacent in a sorted listing, so one screen is held at a time. */
async function* screens(store: ObjectStore, dir: string): AsyncGenerator<Screen> {
  let current: Screen | undefined;
  for await (const { key, unreadable } of store.list(dir)) {
    const name = key.slice(dir.length);
    const kind = kindOf(name);
    if (!kind) continue;
    const stem = name.slice(0, name.indexOf('.'));
    if (current && current.stem !== stem) {
      yield current;
      current = undefined;
    }
    current ??= { stem };
    if (unreadable) current.unreadable ??= { key, why: unreadable };
    else current[kind] ??= key;
  }
  if (current) yield current;
}

/** sourceId is the screen's number, `<N>`. */
async function toItem(screen: Screen, store: ObjectStore, config: SourceConfigOf<'rico'>, sourceIndex: number): Promise<SourceItem> {
  if (screen.unreadable) return unreadableFile(screen.stem, screen.unreadable.key, screen.unreadable.why);
  if (!screen.image) return damaged(screen.stem, 'no-screenshot', `${screen.hierarchy}: a view hierarchy without its screenshot`);
  let grounding: string | undefined;
  if (screen.hierarchy) {
    const body = await store.get(screen.hierarchy);
    const text = body === undefined ? undefined : decodeUtf8(body);
    if (body !== undefined && text === undefined) return damaged(screen.stem, 'encoding', encodingReason(screen.hierarchy));
    let hierarchy: unknown;
    try {
      hierarchy = text === undefined ? undefined : JSON.parse(text);
    } catch (err) {
      return damaged(screen.stem, 'json-malformed', `${screen.hierarchy} is not JSON (${(err as Error).message})`);
    }
    grounding = visibleText(hierarchy);
  }
  return sourceSample('rico', screen.stem, config.licenseNote, { sourceIndex, locator: pathLocator(screen.image) }, { grounding });
}
