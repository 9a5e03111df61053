/**
 * Error bodies in the shape the OpenAI SDK reads. The SDK takes an error's message, `param` and
 * `code` from the body's `error` object only; bodies of other shapes leave it with "400 status code
 * (no body)", and nothing to learn a dialect from (dialect.ts). Each other shape is cited where it is
 * read below; OpenAI's, llama.cpp's, Ollama's and Anthropic's bodies already carry `error` and pass
 * unchanged.
 */

/** The body of an error reply with its error under `error`, or undefined when it is already so (or is no JSON). */
export function normalizedErrorBody(text: string): string | undefined {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return undefined;
  }
  // Gemini's OpenAI-compatible endpoint: a list, `[{"error": {"code": 400, "message": ..., "status":
  // "INVALID_ARGUMENT"}}]` (the body as sent is quoted in Alishahryar1/free-claude-code#542).
  if (Array.isArray(body)) {
    const first: unknown = body.find((item) => isObject(item) && isObject(item.error));
    return first === undefined ? undefined : JSON.stringify(first);
  }
  if (!isObject(body) || isObject(body.error)) return undefined;
  // vLLM before 0.10 and SGLang: a flat `{"object": "error", "message": ..., "type": ..., "param": ...,
  // "code": 400}` (vllm-project/vllm vllm/entrypoints/openai/protocol.py ErrorResponse;
  // sgl-project/sglang python/sglang/srt/entrypoints/openai/protocol.py ErrorResponse).
  if (typeof body.message === 'string') return JSON.stringify({ error: body });
  // FastAPI-based servers' request validation: `{"detail": ...}`
  // (https://fastapi.tiangolo.com/tutorial/handling-errors/#requestvalidationerror-vs-validationerror).
  if (body.detail !== undefined) return JSON.stringify({ error: { message: typeof body.detail === 'string' ? body.detail : JSON.stringify(body.detail) } });
  return undefined;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
