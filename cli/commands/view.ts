/**
 * `mmif view`: writes (or serves) an HTML page of a build's samples with their images, to review a
 * dataset in a browser.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { parseFlags } from '../../config/commandFlags.js';
import type { BuildLayout } from '../../storage/buildLayout.js';
import { writeViewer, type ViewerSummary } from '../../output/viewer/viewer.js';
import type { ViewerFile } from '../../output/viewer/viewerPage.js';
import { getJson, type ObjectStore } from '../../storage/objectStore.js';
import type { BuildReport } from '../../output/contracts/buildReport.js';
import type { QualityReport } from '../../output/reports/qualityReport.js';
import { summaryPanel } from '../../output/reports/viewerSummary.js';
import { CliError, EXIT } from '../exitCodes.js';
import { openDatasetRoot, serveUntilStopped } from '../datasetRoot.js';
import { viewerServer } from '../viewServer.js';

export const VIEW_USAGE = `usage: mmif view <dataset root> [--out FILE] [--serve [--port N] [--host H]] [--limit N]
  Writes a static HTML page showing the build's samples with their images (default
  <dataset root>/viewer.html, its records in viewer-data/ beside it, loaded a page at a time; images
  are linked relative to the page): each SFT record's instruction, constraints with method and
  verdict, and answer; DPO pairs side by side with the dropped constraints marked; rejected samples
  and discarded pairs with their reasons; a summary (counts, cost, records by source, pass rates by
  constraint type, rejections by reason and stage); filters by kind, source, constraint type and verdict. --serve serves the page, its data and the images on
  127.0.0.1:N (default 8080; 0 picks a free port) instead, also for an s3:// root, answering only
  requests whose Host is that address (127.0.0.1 or localhost): --host H listens on H and answers
  requests for H:N only.
  --limit caps the records of each kind shown (default: every record).`;

export async function viewCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseFlags({
    args,
    allowPositionals: true,
    options: {
      out: { type: 'string' },
      serve: { type: 'boolean' },
      port: { type: 'string', default: '8080' },
      host: { type: 'string', default: '127.0.0.1' },
      limit: { type: 'string' },
    },
  });
  const root = positionals[0];
  const limit = values.limit === undefined ? Infinity : Number(values.limit);
  if (!root || positionals.length > 1 || !(limit > 0) || (values.serve && values.out)) throw new CliError(VIEW_USAGE, EXIT.usage);
  const { store, layout, trimmed } = openDatasetRoot(root);
  const noShard = () => new CliError(`no committed shard under ${store.root}/${layout.manifestsPrefix}`, EXIT.notFound);
  const summary = summaryPanel({ report: await getJson<BuildReport>(store, layout.report), quality: await getJson<QualityReport>(store, layout.quality) });

  if (values.serve) {
    // The page and its data files, held in memory (served paths are the page folder's): '/' is the page.
    const files = new Map<string, ViewerFile>();
    const shown = await writeViewer(store, layout, {
      pageName: 'viewer.html',
      limit,
      summary,
      imageSrc: (imagePath) => `/${imagePath}`,
      put: async (f) => files.set(`/${f.path}`, f),
    });
    if (!shown) throw noShard();
    return serve(store, layout, files, values.host!, Number(values.port));
  }
  if (/^s3:\/\//.test(root)) throw new CliError('an s3:// dataset root can only be served (--serve): the page links its images by path', EXIT.usage);
  const out = path.resolve(values.out ?? path.join(trimmed, 'viewer.html'));
  const folder = path.dirname(out);
  const fromPage = (imagePath: string) => path.relative(folder, path.resolve(trimmed, imagePath)).split(path.sep).map(encodeURIComponent).join('/');
  const put = async (file: ViewerFile) => {
    const to = path.join(folder, file.path);
    await mkdir(path.dirname(to), { recursive: true });
    await writeFile(to, file.body);
  };
  const shown = await writeViewer(store, layout, { pageName: path.basename(out), limit, summary, imageSrc: fromPage, put });
  if (!shown) throw noShard();
  console.log(`wrote ${out} (${shownText(shown)})`);
  return EXIT.ok;
}

const shownText = ({ multiturn, shown }: ViewerSummary) =>
  `${multiturn ? `${shown.instruct} chats, ${shown.dpo} turn-level pairs` : `${shown.instruct} SFT records, ${shown.dpo} DPO pairs`}, ${shown.rejected} rejected samples and pairs`;

async function serve(store: ObjectStore, layout: BuildLayout, files: ReadonlyMap<string, ViewerFile>, host: string, port: number): Promise<number> {
  await serveUntilStopped(viewerServer(store, layout, files, host), host, port, 'the viewer');
  return EXIT.ok;
}
