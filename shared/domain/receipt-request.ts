import { z } from 'zod';
import { usdAmount } from './money';
import { receiptStatuses } from './receipt';
import { Id, blankAsAbsent, queryIntegerOr } from './query-params';

/** Path segments under /api/receipts that are not receipt ids. */
const fixedSegments = new Set(['status', 'terminal', 'refund']);

export const ReceiptIdInput = Id.refine((id) => !fixedSegments.has(id.toLowerCase()), 'is a reserved word');

const MAX_METADATA_BYTES = 4096;
const utf8 = new TextEncoder();

export const ReceiptCreateRequest = z
  .object({
    id: ReceiptIdInput,
    lineItems: z
      .array(
        z.object({
          label: z.string().trim().min(1).max(200),
          priceUsd: usdAmount,
          qty: z.number().int().min(1).max(1_000_000).optional(),
          sku: z.string().trim().min(1).max(64).optional(),
        }),
      )
      .min(1, 'at least one line item is required')
      .max(100, 'at most 100 line items'),
    totalUsd: usdAmount,
    webhook_url: z.string().max(2048).optional(),
    redirect_url: z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' }).max(2048).optional(),
    transactionId: z.string().max(200).optional(),
    metadata: z
      .record(z.string(), z.unknown())
      .refine((value) => utf8.encode(JSON.stringify(value)).length <= MAX_METADATA_BYTES, `must be at most ${MAX_METADATA_BYTES} bytes of JSON`)
      .optional(),
  })
  .superRefine((request, ctx) => {
    const sum = request.lineItems.reduce((cents, line) => cents + Math.round(line.priceUsd * 100), 0);
    if (sum !== Math.round(request.totalUsd * 100)) {
      ctx.addIssue({ code: 'custom', path: ['totalUsd'], message: `must equal the sum of the line items (${(sum / 100).toFixed(2)})` });
    }
  });
export type ReceiptCreateRequest = z.output<typeof ReceiptCreateRequest>;

/**
 * The request as the text its idempotency hash is taken of (shared/app/hashing.ts): the same request
 * sent twice gives the same text, whatever the key order of its objects.
 */
export const canonicalRequestText = (request: ReceiptCreateRequest): string => {
  const canonical = (value: unknown): unknown =>
    Array.isArray(value)
      ? value.map(canonical)
      : value && typeof value === 'object'
        ? Object.fromEntries(Object.keys(value).sort().map((key) => [key, canonical((value as Record<string, unknown>)[key])]))
        : value;
  return JSON.stringify(canonical(request));
};

export const ReceiptListQuery = z.object({
  limit: queryIntegerOr(1, 200, 100),
  cursor: z.preprocess(blankAsAbsent, z.string().max(500).optional()),
  status: z.preprocess(blankAsAbsent, z.enum(receiptStatuses).optional()),
});

export const ReceiptStatusQuery = z.object({ id: z.preprocess(blankAsAbsent, Id) });

export const ReceiptStatusUpdate = z.object({
  id: Id,
  status: z.string().min(1).max(40),
  failureCode: z.string().max(80).optional(),
});
