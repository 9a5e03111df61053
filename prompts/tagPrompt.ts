/**
 * The image-tagging prompt of the `vlm-tags` richness scorer: the build's own VLM in the role of
 * RAM++ (Recognize Anything), whose tag count the paper's authors used as a richness signal.
 */
import { z } from 'zod';
import { rendered, type RenderedPrompt } from './chat.js';

export const TAG_SCHEMA_NAME = 'image_tags';

export const tagReplySchema = z.object({ tags: z.array(z.string()) });

export function renderTagPrompt(): RenderedPrompt {
  const text = `You are an image tagger. List the distinct objects, attributes and scene tags visible in the image, one short lowercase tag each (a noun, an adjective or a scene word, e.g. "dog", "red", "beach", "sunset"), without repeats.

Reply in the following format:
{"tags": ["<tag 1>", "<tag 2>", "..."]}`;
  return rendered('image_tags', [{ role: 'user', text, withImage: true }]);
}

/** Distinct tags after trimming and lowercasing: the count stands in for RAM++'s `ram_cnt`. */
export function distinctTags(tags: readonly string[]): string[] {
  return [...new Set(tags.map((t) => t.trim().toLowerCase()).filter((t) => t.length > 0))];
}
