/**
 * Geo170K (G-LLaVA) as downloaded: `qa_tuning.json` and `alignment.json` at the root, JSON arrays of
 * LLaVA records whose `image` (e.g. `geoqa_plus/10756.png`) lives under `images/`. QA questions are
 * multiple choice wrapped in a "First perform reasoning..." or "Based on the image, directly select..."
 * preamble: the preamble and the `Choices:` block are stripped and the stem kept
 * (question.dropMultipleChoice defaults to false here), for the refinement stage to turn into an open
 * question. Answers end in `Answer:C`: letters are rewritten to the option's text.
 */
import type { SourceConfigOf } from '../../config/sourceConfig.js';
import { openStore, type S3Options } from '../../storage/openStore.js';
import { inSegments, type SourceReader } from '../contract.js';
import { pathNamedReader } from '../readers/namedImages.js';
import { llavaItems } from '../readers/conversations.js';
import { optionTexts, withoutOptionLetters } from '../referenceAnswers.js';

const EXPECTED =
  'expected the Geo170K layout: qa_tuning.json and/or alignment.json (JSON arrays of {id, image, conversations}) ' +
  'at the root, with the diagrams they name under images/ (e.g. images/geoqa_plus/10756.png)';

export function open(config: SourceConfigOf<'geo170k'>, sourceIndex: number, s3: S3Options): SourceReader {
  const store = openStore(config.uri, s3);
  return pathNamedReader(store, {
    segments: () =>
      inSegments(
        llavaItems({
          source: 'geo170k',
          store,
          files: config.files,
          imageDir: 'images',
          licenseNote: config.licenseNote,
          sourceIndex,
          question: config.question,
          expected: EXPECTED,
          // The options are stripped from the question, so the answer's letter becomes the option's text.
          reference: (answer, rawQuestion) => withoutOptionLetters(answer, optionTexts(rawQuestion)),
        }),
      ),
    describe: async () => `files ${config.files.join(', ')} (LLaVA conversations), diagrams under images/`,
  });
}
