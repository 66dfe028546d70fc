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
 * The client's address as the gateway saw it, or null: the last `X-Forwarded-For` entry, the one the
 * gateway appended for the peer it took the call from (API Management does, and so does the local
 * host). Every entry before it is whatever the client sent. An IPv4 address may carry a port; a last
 * entry that is no IP address is null, never an earlier entry. Only informative (a provider's risk
 * screening): never used to decide access.
 */
export const clientAddressOf = (headers: IncomingCall['headers']): string | null => {
  const last = headers.get('x-forwarded-for')?.split(',').at(-1)?.trim().replace(/^(\d+\.\d+\.\d+\.\d+):\d+$/, '$1') ?? '';
  return ipFamily(last) === 0 ? null : last;
};
