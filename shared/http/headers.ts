import { randomUUID } from 'node:crypto';

export const MAX_BODY_BYTES = 256 * 1024;

export const CORRELATION_HEADER = 'x-correlation-id';
export const SUBSCRIPTION_HEADER = 'x-subscription-id';
export const EDGE_SECRET_HEADER = 'x-edge-secret';
export const API_KEY_HEADERS = ['ocp-apim-subscription-key', 'x-api-key'] as const;
/** Client-supplied wallet hints: the gateway removes them and the backend never reads them. */
export const WALLET_HEADERS = ['x-wallet', 'wallet'] as const;

const CORRELATION_PATTERN = /^[A-Za-z0-9._:-]{1,128}$/;

/** Echoes a well-formed incoming correlation id, otherwise makes one. */
export const correlationIdFor = (incoming: string | null | undefined): string =>
  incoming && CORRELATION_PATTERN.test(incoming) ? incoming : randomUUID();

export const jsonHeaders = (correlationId: string, extra: Record<string, string> = {}): Record<string, string> => ({
  'content-type': 'application/json; charset=utf-8',
  [CORRELATION_HEADER]: correlationId,
  ...extra,
});
