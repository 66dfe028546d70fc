import type { ZodError } from 'zod';

/** Stable error codes a caller can see. The HTTP layer maps each one to a status. */
export const errorCodes = [
  'invalid_input',
  'id_required',
  'unauthorized',
  'forbidden',
  'not_found',
  'conflict',
  'key_active',
  'target_key_not_found',
  'target_key_revoked',
  'slug_taken',
  'items_required',
  'inventory_item_not_found',
  'insufficient_stock',
  'split_required',
  'platform_recipient_not_configured',
  'payment_required',
  'unsupported_token',
  'price_stale',
  'receipt_not_payable',
  'receipt_not_paid',
  'transaction_not_found',
  'transaction_already_used',
  'not_a_payment',
  'refund_too_large',
  'refund_through_provider',
  'invalid_signature',
  'onramp_refused',
  'payload_too_large',
  'headers_too_large',
  'bad_request',
  'request_timeout',
  'rate_limited',
  'relayer_budget_spent',
  'store_unavailable',
  'service_unavailable',
  'internal_error',
] as const;

export type ErrorCode = (typeof errorCodes)[number];

export class DomainError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details: Record<string, unknown> = {},
  ) {
    super(message);
    this.name = 'DomainError';
  }
}

/** Names the first failing field, e.g. `limit: must be at most 200`. */
export const describeZodError = (error: ZodError, root?: string): { field: string; message: string } => {
  const issue = error.issues[0];
  const path = [root, ...(issue?.path ?? [])].filter((part) => part !== undefined && part !== '').join('.');
  const field = path || root || 'body';
  return { field, message: `${field}: ${issue?.message ?? 'is invalid'}` };
};

export const invalidInput = (field: string, message: string): DomainError =>
  new DomainError('invalid_input', `${field}: ${message}`, { field });
