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
