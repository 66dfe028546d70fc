import { ZodError } from 'zod';
import { DomainError, describeZodError, type ErrorCode } from '../domain/errors';
import { DependencyUnavailableError, StoreThrottledError, StoreUnavailableError } from '../ports/errors';

/** The single map from error code to HTTP status. */
export const httpStatusOf: Record<ErrorCode, number> = {
  invalid_input: 400,
  id_required: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  key_active: 409,
  target_key_not_found: 400,
  target_key_revoked: 409,
  slug_taken: 409,
  items_required: 400,
  inventory_item_not_found: 400,
  insufficient_stock: 409,
  split_required: 403,
  platform_recipient_not_configured: 400,
  payment_required: 402,
  unsupported_token: 400,
  price_stale: 409,
  receipt_not_payable: 409,
  receipt_not_paid: 409,
  transaction_not_found: 404,
  transaction_already_used: 409,
  not_a_payment: 400,
  invalid_signature: 400,
  onramp_refused: 409,
  refund_too_large: 400,
  refund_through_provider: 409,
  payload_too_large: 413,
  headers_too_large: 431,
  bad_request: 400,
  request_timeout: 408,
  rate_limited: 429,
  relayer_budget_spent: 503,
  internal_error: 500,
  store_unavailable: 503,
  service_unavailable: 503,
};

export interface ErrorBody {
  error: ErrorCode;
  message: string;
  [extra: string]: unknown;
}

const retryAfter = (ms: number): Record<string, string> => ({ 'retry-after': String(Math.max(1, Math.ceil(ms / 1000))) });

/**
 * Turns anything thrown into a status, a stable body and the headers that go with it (`Retry-After` on
 * a 429, a spent relayer budget or a throttled store); unknown errors reveal nothing.
 */
export const toErrorResponse = (error: unknown, now = Date.now()): { status: number; body: ErrorBody; headers: Record<string, string>; unexpected: boolean } => {
  if (error instanceof DomainError) {
    const resetAt = error.details.resetAt;
    const headers = (error.code === 'rate_limited' || error.code === 'relayer_budget_spent') && typeof resetAt === 'number' ? retryAfter(resetAt - now) : {};
    return { status: httpStatusOf[error.code], body: { error: error.code, message: error.message, ...error.details }, headers, unexpected: false };
  }
  if (error instanceof StoreThrottledError) {
    return { status: 503, body: { error: 'store_unavailable', message: 'the document store is busy; try again shortly', retryAfterMs: error.retryAfterMs }, headers: retryAfter(error.retryAfterMs), unexpected: false };
  }
  if (error instanceof ZodError) {
    const { field, message } = describeZodError(error);
    return { status: 400, body: { error: 'invalid_input', message, field }, headers: {}, unexpected: false };
  }
  if (error instanceof DependencyUnavailableError) {
    return { status: 503, body: { error: 'service_unavailable', message: `a service this call needs (${error.dependency}) is unavailable; try again shortly` }, headers: {}, unexpected: false };
  }
  if (error instanceof StoreUnavailableError) {
    return { status: 503, body: { error: 'store_unavailable', message: 'the document store is unavailable; try again shortly' }, headers: {}, unexpected: false };
  }
  return { status: 500, body: { error: 'internal_error', message: 'an unexpected error occurred' }, headers: {}, unexpected: true };
};
