import { z } from 'zod';
import { paymentRefusals, type PaymentRequiredV1 } from '../domain/x402';

/**
 * The body of an x402 route's 402: the protocol's v1 `PaymentRequired` (the same challenge travels,
 * in the v2 form, base64 in the `PAYMENT-REQUIRED` header). Described here for the OpenAPI documents;
 * the gate builds it from the domain's types, and the assignment below keeps the two the same shape.
 */
const address = z.string().regex(/^0x[0-9a-fA-F]{40}$/).describe('0x address');

export const PaymentRequirementsV1Body = z.object({
  scheme: z.literal('exact').describe('an EIP-3009 transferWithAuthorization of exactly the amount, signed by the payer'),
  network: z.string().min(1).describe("the protocol's v1 name of the chain, e.g. base, base-sepolia"),
  maxAmountRequired: z.string().regex(/^\d+$/).describe('atomic units of the asset (USDC: 6 decimals), decimal'),
  resource: z.url().describe('the URL being paid for'),
  description: z.string(),
  mimeType: z.string().describe('media type of the paid answer'),
  payTo: address.describe("the recipient: the shop's split for an order, the platform's wallet for a plan"),
  maxTimeoutSeconds: z.number().int().positive(),
  asset: address.describe('the token contract (USDC)'),
  extra: z.object({ name: z.string(), version: z.string() }).describe("the token's EIP-712 domain, which the authorization is signed in"),
});

export const PaymentRequiredV1Body = z.object({
  x402Version: z.literal(1),
  error: z.enum(paymentRefusals).describe('why payment is asked for: payment_required when no proof was sent, else why the proof was refused'),
  accepts: z.array(PaymentRequirementsV1Body).min(1),
});

// The schema's output must be the domain's challenge type: a change there that this schema does not follow fails the type check.
const sameShape = (body: z.output<typeof PaymentRequiredV1Body>): PaymentRequiredV1 => body;
void sameShape;
