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

/** The header in which the gateway tells the backend the client's address (over any client value). */
export const CLIENT_ADDRESS_HEADER = 'x-client-address';

/**
 * The client's address as the gateway saw it, or null: `x-client-address`, which API Management (and
 * the local host, in its place) sets over whatever the client sent. X-Forwarded-For is not read: its
 * first entries are the client's own words, and its last is whichever front end forwarded the call
 * last (App Service's own, behind the gateway). An IPv4 address may carry a port; a value that is no
 * IP address is null. Only informative (a provider's risk screening): never used to decide access.
 */
export const clientAddressOf = (headers: IncomingCall['headers']): string | null => {
  const value = headers.get(CLIENT_ADDRESS_HEADER)?.trim().replace(/^(\d+\.\d+\.\d+\.\d+):\d+$/, '$1') ?? '';
  return ipFamily(value) === 0 ? null : value;
};
