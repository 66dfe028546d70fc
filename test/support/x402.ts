import { x402Client } from '@x402/core/client';
import { decodePaymentRequiredHeader, encodePaymentSignatureHeader } from '@x402/core/http';
import { registerExactEvmScheme } from '@x402/evm/exact/client';
import { privateKeyToAccount } from 'viem/accounts';
import type { PaymentPayload } from '../../shared/domain/x402';

/**
 * A v2 proof made by the protocol's own client for a challenge (its `PAYMENT-REQUIRED` header, or
 * the challenge decoded), signed with `privateKey`: what an agent with that wallet sends.
 */
export const protocolProof = async (privateKey: string, challenge: string | Parameters<x402Client['createPaymentPayload']>[0]): Promise<PaymentPayload> => {
  const client = new x402Client();
  registerExactEvmScheme(client, { signer: privateKeyToAccount(privateKey as `0x${string}`) });
  // The local token is in no default asset list: no spending cap applies to it.
  client.setSpendControls(false);
  const required = typeof challenge === 'string' ? decodePaymentRequiredHeader(challenge) : challenge;
  return (await client.createPaymentPayload(required)) as unknown as PaymentPayload;
};

/** The header a v2 proof travels in. */
export const v2ProofHeader = (payload: PaymentPayload): Record<string, string> => ({ 'PAYMENT-SIGNATURE': encodePaymentSignatureHeader(payload as never) });
