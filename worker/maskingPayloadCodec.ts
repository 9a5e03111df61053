/**
 * The choke point for secrets in history PAYLOADS (the interceptor in maskSecretsInterceptor.ts covers
 * failures, the store covers files): every payload a worker or a client sends to Temporal (a build's
 * workflow input as the CLI starts it, activity inputs and results such as stage outcomes, child and
 * continue-as-new inputs, workflow results such as the build report, query answers) passes this
 * codec, which masks secret values (config/secrets.ts) in JSON text. Client and worker use the same
 * converter (`maskingDataConverter`). A payload that names a key variable (`"apiKeyEnv":"NAME"`, as
 * a config does) has that variable masked too, in a process that never read it (the CLI). Masking
 * rather than encrypting keeps history readable by `temporal workflow show` without a codec server.
 */
import type { DataConverter, Payload, PayloadCodec } from '@temporalio/common';
import { markSecret, maskSecrets } from '../config/secrets.js';

const decoder = new TextDecoder();
const encoder = new TextEncoder();

const NAMED_KEY = /"apiKeyEnv":"([A-Z_][A-Z0-9_]*)"/g;

export const maskingPayloadCodec: PayloadCodec = {
  async encode(payloads: Payload[]): Promise<Payload[]> {
    return payloads.map((payload) => {
      const encoding = payload.metadata?.encoding ? decoder.decode(payload.metadata.encoding) : '';
      if (!payload.data || encoding !== 'json/plain') return payload;
      const text = decoder.decode(payload.data);
      for (const [, name] of text.matchAll(NAMED_KEY)) markSecret(name!);
      const masked = maskSecrets(text);
      return masked === text ? payload : { ...payload, data: encoder.encode(masked) };
    });
  },
  // Masked text stays masked: nothing was meant to be read back.
  async decode(payloads: Payload[]): Promise<Payload[]> {
    return payloads;
  },
};

/** The data converter of every Temporal client and worker of the engine. */
export const maskingDataConverter: DataConverter = { payloadCodecs: [maskingPayloadCodec] };
