/**
 * MultiUI (neulab/MultiUI, gated) as downloaded: JSON arrays of LLaVA records `{id, image, conversations}`
 * (the config names the files), image paths relative to the root. The task type is encoded in the
 * record id (`webqa_...`, `embed_qa_...`): web QA, embedded-image QA and meta-description generation
 * read as instructions; grounding (boxes, coordinates) and OCR (transcription) tasks do not, and are
 * dropped and counted by kind (`title_identification`, reading the page heading back, is OCR).
 * Files as released: definition.ts RELEASE_FILES, read when the config names none.
 */
import type { SourceConfigOf } from '../../config/sourceConfig.js';
import { sourceStore } from '../readers/extractedView.js';
import type { S3Options } from '../../storage/s3Store.js';
import { inSegments, type SourceReader } from '../contract.js';
import { pathNamedReader } from '../readers/namedImages.js';
import { llavaItems, type LlavaSource } from '../readers/conversations.js';
import { withoutBoxes } from '../referenceAnswers.js';

const EXPECTED = 'expected the MultiUI layout: the JSON arrays of {id, image, conversations} named by `files`, with the screenshots they name under the same root';

export function open(config: SourceConfigOf<'multiui'>, sourceIndex: number, s3: S3Options): SourceReader {
  const store = sourceStore(config.uri, s3);
  return pathNamedReader(store, {
    segments: () =>
      inSegments(
        llavaItems({
          source: 'multiui',
          store,
          files: config.files,
          imageDir: '',
          licenseNote: config.licenseNote,
          sourceIndex,
          question: config.question,
          expected: EXPECTED,
          screen: taskScreen(config.keepTasks),
          // webqa answers point at elements with `[x1, y1, x2, y2]` boxes the answer model never sees.
          reference: withoutBoxes,
        }),
      ),
    describe: async () => `files ${config.files.join(', ')} (LLaVA conversations), tasks kept: ${config.keepTasks.join(', ')}`,
  });
}

/** Tasks that transcribe text from the page: `title_identification` reads the page's heading back. */
const OCR_TASKS = ['ocr', 'title_identification'];

/** A task matches where the id has it between non-alphanumerics: `embed_qa_17`, `17-webqa`. */
function taskPattern(task: string): RegExp {
  return new RegExp(`(?<![A-Za-z0-9])${task}(?![A-Za-z0-9])`, 'i');
}

/** Keeps records whose id names one of `keep`; the others are dropped as grounding, OCR or other tasks. */
function taskScreen(keep: readonly string[]): NonNullable<LlavaSource['screen']> {
  const kept = keep.map(taskPattern);
  const ocr = OCR_TASKS.map(taskPattern);
  const keptList = keep.join(', ');
  return (id) => {
    if (id === undefined) return { filter: 'task-unknown', reason: `no id to read the task type from (kept: ${keptList})` };
    if (kept.some((pattern) => pattern.test(id))) return undefined;
    const words = id.toLowerCase().split(/[^a-z]+/);
    const kind = words.some((w) => w.includes('ground')) ? 'grounding' : ocr.some((pattern) => pattern.test(id)) ? 'ocr' : 'other';
    const what = kind === 'other' ? 'a task not in keepTasks' : `a ${kind === 'ocr' ? 'OCR' : kind} task`;
    return { filter: `task-${kind}`, reason: `id '${id}' names ${what} (kept: ${keptList})` };
  };
}
