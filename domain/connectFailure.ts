/**
 * What a failed connection to an endpoint says about its address. The SDK's "Connection error." wraps
 * Node's fetch error, which wraps the socket's system error: its `code` names what happened. A refused
 * connection (ECONNREFUSED), an unknown host (ENOTFOUND) or a certificate or TLS handshake the client
 * rejects is, at pre-flight, a wrong host, port or scheme far more often than an outage, and no retry
 * changes it; EAI_AGAIN is DNS answering "try again", so it counts only when it persists. Codes from
 * Node's common system errors (https://nodejs.org/api/errors.html#common-system-errors), getaddrinfo's
 * error codes (https://nodejs.org/api/dns.html#error-codes), the certificate error codes of
 * `tls.TLSSocket.authorizationError` / X509 verification (https://nodejs.org/api/tls.html#x509-certificate-error-codes)
 * and OpenSSL's ERR_SSL_* / EPROTO (a handshake with a server that speaks no TLS, e.g. https:// to a plain HTTP port).
 */
import { causeChain } from './causeChain.js';

/** The system error codes (ECONNREFUSED, ...) in an error's causes, itself first: the SDK wraps the fetch error, which wraps the socket's. */
export function causeCodes(err: unknown): string[] {
  return causeChain(err).flatMap((e) => {
    const code = (e as { code?: unknown }).code;
    return e instanceof Error && typeof code === 'string' ? [code] : [];
  });
}

export interface ConnectFailure {
  kind: 'refused' | 'unknown-host' | 'tls';
  /** In plain words, naming the address: "nothing listens at 127.0.0.1:9: connection refused". */
  what: string;
}

const TLS_CODES = new Set(['UNABLE_TO_VERIFY_LEAF_SIGNATURE', 'DEPTH_ZERO_SELF_SIGNED_CERT', 'SELF_SIGNED_CERT_IN_CHAIN', 'EPROTO']);
const isTlsCode = (code: string) => TLS_CODES.has(code) || /^(ERR_TLS_|ERR_SSL_|CERT_)/.test(code);

/**
 * A connection failure no retry changes, named for the address `baseURL` points at; undefined for
 * anything else (an answer, a timeout, a reset connection). `persisted`: the failure held over the
 * retries, so a temporary DNS failure (EAI_AGAIN) counts as an unknown host too.
 */
export function connectFailureOf(err: unknown, baseURL: string, persisted: boolean): ConnectFailure | undefined {
  const codes = causeCodes(err);
  const url = new URL(baseURL);
  const host = url.port ? url.host : `${url.host}:${url.protocol === 'https:' ? 443 : 80}`;
  if (codes.includes('ECONNREFUSED')) return { kind: 'refused', what: `nothing listens at ${host}: connection refused` };
  if (codes.includes('ENOTFOUND') || (persisted && codes.includes('EAI_AGAIN'))) {
    return { kind: 'unknown-host', what: `host ${url.hostname} not found (DNS: ${codes.includes('ENOTFOUND') ? 'ENOTFOUND' : 'EAI_AGAIN'})` };
  }
  const tls = causeWith(err, isTlsCode);
  if (tls) return { kind: 'tls', what: `TLS with ${host} failed: ${tls.code}: ${tlsReason(tls)}` };
  return undefined;
}

/** The first of an error's causes (itself included) whose system error code passes `test`. */
function causeWith(err: unknown, test: (code: string) => boolean): (Error & { code: string }) | undefined {
  return causeChain(err).find((e): e is Error & { code: string } => {
    const code = (e as { code?: unknown }).code;
    return e instanceof Error && typeof code === 'string' && test(code);
  });
}

/**
 * In words: an OpenSSL error carries its `reason` ("wrong version number"), or only the OpenSSL error
 * string in its message ("write EPROTO 80..:error:0A00010B:SSL routines:ssl3_get_record:wrong version
 * number:file:line:", the format of OpenSSL's ERR_error_string_n, https://docs.openssl.org/3.0/man3/ERR_error_string/);
 * a certificate error's message is its words ("self-signed certificate").
 */
function tlsReason(err: Error): string {
  const reason = (err as { reason?: unknown }).reason;
  if (typeof reason === 'string' && reason) return reason;
  return /:error:[0-9A-F]+:[^:]*:[^:]*:([^:]+):/.exec(err.message)?.[1] ?? err.message.split('\n')[0]!.trim();
}

/** The deepest message of an error's causes: the socket's own words ("self-signed certificate"). */
export function innermostMessage(err: unknown): string {
  const messages = causeChain(err).flatMap((e) => (e instanceof Error && e.message ? [e.message] : []));
  return messages.at(-1) ?? (err instanceof Error ? err.message : String(err));
}
