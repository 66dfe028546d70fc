import { ipFamily } from '../domain/ip-address';
/**
 * What a handler reads of a request. The Functions runtime's HttpRequest is one; the local host builds
 * another straight from node:http, so serving locally does not pay for a fetch Request per call.
 */
export interface IncomingCall {
  method: string;
  headers: { get(name: string): string | null };
  query: URLSearchParams;
  params: Record<string, string>;
  /** The body as text, read no further than `maxBytes` (past it: 413 payload_too_large). */
  text(maxBytes: number): Promise<string>;
}

/**
 * The client's address as the gateway saw it (the first `X-Forwarded-For` entry, when it is an IP
 * address), or null. Only informative (a provider's risk screening): never used to decide access.
 */
export const clientAddressOf = (headers: IncomingCall['headers']): string | null => {
  const first = headers.get('x-forwarded-for')?.split(',')[0]?.trim().replace(/^(\d+\.\d+\.\d+\.\d+):\d+$/, '$1') ?? '';
  return ipFamily(first) === 0 ? null : first;
};
