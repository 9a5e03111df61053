/**
 * A rendered prompt as OpenAI chat messages: the image goes in as a base64 data URL part of the
 * message that carries it, and a JSON reply schema as a `json_schema` response format.
 */
import { z } from 'zod';
import type { ChatCompletionContentPart, ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import type { BuildConfig } from '../config/buildConfig.js';
import type { RenderedPrompt } from '../prompts/chat.js';

export interface MessageImage {
  jpeg: Buffer;
  sha256: string;
}

export function chatMessages(prompt: RenderedPrompt, image: MessageImage | undefined, detail: BuildConfig['llm']['imageDetail']): ChatCompletionMessageParam[] {
  return prompt.messages.map((m): ChatCompletionMessageParam => {
    // A preface is its own text part (prompts/chat.ts), with or without the image before it.
    const texts: ChatCompletionContentPart[] = [...(m.preface === undefined ? [] : [m.preface]), m.text].map((text) => ({ type: 'text', text }));
    if (!m.withImage || !image) return { role: m.role, content: m.preface === undefined ? m.text : texts } as ChatCompletionMessageParam;
    return { role: 'user', content: [{ type: 'image_url', image_url: { url: imageDataUrl(image), detail } }, ...texts] };
  });
}

/**
 * The image as a base64 data URL, encoded once per image object: a stage execution loads its
 * sample's image once and sends it in every call (and its cache key), so the encoding is not redone
 * per call. Weakly held: it goes with the image.
 */
const dataUrls = new WeakMap<object, string>();
export function imageDataUrl(image: { jpeg: Buffer }): string {
  let url = dataUrls.get(image);
  if (url === undefined) {
    url = `data:image/jpeg;base64,${image.jpeg.toString('base64')}`;
    dataUrls.set(image, url);
  }
  return url;
}

/** A message with the image's data URL replaced by '<image>' (a cache key names the image by its hash). */
export function withoutImage(message: ChatCompletionMessageParam, imageUrl: string | undefined): ChatCompletionMessageParam {
  if (imageUrl === undefined || !Array.isArray(message.content)) return message;
  const content = message.content.map((part) =>
    part.type === 'image_url' && part.image_url.url === imageUrl ? { ...part, image_url: { ...part.image_url, url: '<image>' } } : part,
  );
  return { ...message, content } as ChatCompletionMessageParam;
}

/** A reply schema as JSON Schema, converted once per schema rather than per call (never mutated: bodies and keys only read it). */
const jsonSchemas = new WeakMap<z.ZodType, Record<string, unknown>>();
export function jsonSchemaOf(schema: z.ZodType): Record<string, unknown> {
  let converted = jsonSchemas.get(schema);
  if (converted === undefined) {
    converted = z.toJSONSchema(schema) as Record<string, unknown>;
    jsonSchemas.set(schema, converted);
  }
  return converted;
}
