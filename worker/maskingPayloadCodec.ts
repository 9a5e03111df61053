/**
 * The choke point for secrets in history PAYLOADS (the interceptor in maskSecretsInterceptor.ts covers
 * failures, the store covers files): every payload the worker sends to Temporal (activity results
 * such as stage outcomes, child and continue-as-new inputs, workflow results such as the build report,
 * query answers) passes this codec, which masks secret values (config/secrets.ts) in JSON text.
 * Masking rather than encrypting keeps history readable by `temporal workflow show` without a codec
 * server. A value as it reads inside a JSON string (escaped) is masked too.
 */
import type { Payload, PayloadCodec } from '@temporalio/common';
import { maskSecrets } from '../config/secrets.js';

const decoder = new TextDecoder();
const encoder = new TextEncoder();

export const maskingPayloadCodec: PayloadCodec = {
  async encode(payloads: Payload[]): Promise<Payload[]> {
    return payloads.map((payload) => {
      const encoding = payload.metadata?.encoding ? decoder.decode(payload.metadata.encoding) : '';
      if (!payload.data || encoding !== 'json/plain') return payload;
      const text = decoder.decode(payload.data);
      const masked = maskSecrets(text);
      return masked === text ? payload : { ...payload, data: encoder.encode(masked) };
    });
  },
  // Masked text stays masked: nothing was meant to be read back.
  async decode(payloads: Payload[]): Promise<Payload[]> {
    return payloads;
  },
};
