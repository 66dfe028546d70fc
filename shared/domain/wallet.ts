import { z } from 'zod';

/** An EVM address, kept lower-case so it can serve as a partition key and in comparisons. */
export const walletAddress = z
  .string()
  .regex(/^0x[0-9a-fA-F]{40}$/, 'must be a 0x-prefixed 20-byte hex address')
  .transform((address) => address.toLowerCase());

export type WalletAddress = z.output<typeof walletAddress>;
