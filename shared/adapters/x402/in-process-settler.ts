/**
 * The x402 facilitator in this process: the protocol's own (`x402Facilitator` with the EVM `exact`
 * scheme) on the deployment's chain, the relayer submitting each `transferWithAuthorization` and
 * paying its gas.
 */
import { x402Facilitator } from '@x402/core/facilitator';
import { registerExactEvmScheme } from '@x402/evm/exact/facilitator';
import { concat, encodeFunctionData, keccak256, parseAbi, type Hex } from 'viem';
import { ExactEvmPayload, caip2Network } from '../../domain/x402';
import type { PaymentPayload, PaymentRequirements, PaymentSettler, VerifyResult } from '../../ports/payment-settler';
import { isUnreachable, publicClientFor, relayerWalletFor, type ChainEndpoint } from './chain-clients';
import { relayerTurn } from '../evm/relayer-turn';

type FacilitatorSigner = Parameters<typeof registerExactEvmScheme>[1]['signer'];
type FacilitatorArguments = Parameters<x402Facilitator['verify']>;

export interface InProcessSettlerOptions extends ChainEndpoint {
  relayerPrivateKey: string;
  /**
   * How long a settlement waits for its transaction to be mined before answering `settlement_pending`
   * (below the Functions host's request limit, so the answer is never cut off).
   */
  confirmationTimeoutMs?: number;
}

const DEFAULT_CONFIRMATION_TIMEOUT_MS = 60_000;
const SEND_ATTEMPTS = 3;

/** The node refused the transaction's nonce: another sender of the relayer's (the split deployments) took it first. */
const NONCE_CLASH = /nonce too low|nonce has already been used|lower than the current nonce|already known|replacement transaction underpriced/i;
/** The node has this very transaction already (in its pool): an earlier send of it, whose answer was lost, reached it. */
const ALREADY_KNOWN = /already known|already imported|known transaction/i;
const messageOf = (error: unknown) => (error instanceof Error ? error.message : String(error));

const eip3009Reads = parseAbi([
  'function balanceOf(address account) view returns (uint256)',
  'function authorizationState(address authorizer, bytes32 nonce) view returns (bool)',
]);

const SIMULATION_FAILED = 'invalid_exact_evm_transaction_simulation_failed';

export const inProcessSettler = (options: InProcessSettlerOptions): PaymentSettler => {
  const client = publicClientFor(options);
  const wallet = relayerWalletFor(options, options.relayerPrivateKey);
  const relayer = wallet.account.address;

  /**
   * One send at a time, in the relayer key's one queue of this process (`relayerTurn`, shared with the
   * chain adapter's signer), each with the account's pending nonce read just before: no two sends of
   * the key take the same nonce, and a send that fails leaves no gap. Each transaction is
   * signed here and its hash kept: a send whose answer was lost is sent again as the very same
   * transaction, and a node that already has it (`already known`, or `nonce too low` once it is
   * mined) answers with that hash, never a second transaction. A nonce another sender of the same
   * key took meanwhile is retried with a fresh one.
   */
  const send = (sign: (nonce: number) => Promise<Hex>): Promise<Hex> =>
    relayerTurn(relayer, async () => {
      for (let attempt = 1; ; attempt++) {
        const nonce = await client.getTransactionCount({ address: relayer, blockTag: 'pending' });
        const serializedTransaction = await sign(nonce);
        const hash = keccak256(serializedTransaction);
        let clash: unknown;
        for (let resend = 1; ; resend++) {
          try {
            return await client.sendRawTransaction({ serializedTransaction });
          } catch (error) {
            if (isUnreachable(error)) {
              if (resend < SEND_ATTEMPTS) continue;
              // No answer to any send: the node may well have the transaction (only its answer was
              // lost), so it is awaited as sent. Reported failed, it could still be mined afterwards,
              // a payment the gate had refused; awaited, one that never arrived ends as pending, and
              // the gate asks the chain later how it went.
              return hash;
            }
            const message = messageOf(error);
            if (!NONCE_CLASH.test(message)) throw error;
            if (ALREADY_KNOWN.test(message)) return hash;
            // The nonce is taken: by this very transaction (sent before, its answer lost), or by another sender.
            if (await client.getTransaction({ hash }).then(() => true, () => false)) return hash;
            clash = error;
            break;
          }
        }
        if (attempt >= SEND_ATTEMPTS) throw clash;
      }
    });
  /** A transaction of the relayer's, prepared (gas, fees) and signed with `nonce`. */
  const signed = async (request: Record<string, unknown>, nonce: number): Promise<Hex> => {
    const prepared = await wallet.prepareTransactionRequest({ ...request, account: wallet.account, chain: wallet.chain, nonce } as never);
    return wallet.signTransaction(prepared as never);
  };

  const timeout = options.confirmationTimeoutMs ?? DEFAULT_CONFIRMATION_TIMEOUT_MS;
  const signer: FacilitatorSigner = {
    getAddresses: () => [relayer],
    readContract: (args) => client.readContract(args as never),
    verifyTypedData: (args) => client.verifyTypedData(args as never),
    getCode: (args) => client.getCode(args),
    writeContract: ({ address, abi, functionName, args, gas, dataSuffix }) =>
      send((nonce) => signed({ to: address, data: concat([encodeFunctionData({ abi, functionName, args } as never), dataSuffix ?? '0x']), ...(gas !== undefined && { gas }) }, nonce)),
    sendTransaction: (args) => send((nonce) => signed(args, nonce)),
    waitForTransactionReceipt: (args) => client.waitForTransactionReceipt({ ...args, timeout: args.timeout ?? timeout }),
  };
  const facilitator = registerExactEvmScheme(new x402Facilitator(), { signer, networks: caip2Network(options.chainId) as `${string}:${string}` });

  /**
   * The scheme explains a failed simulation (used nonce, short balance) with a Multicall3 read, and
   * a chain without Multicall3 (the local one) leaves it unexplained: the same reads, one by one.
   */
  const explain = async (result: VerifyResult, payload: PaymentPayload, requirements: PaymentRequirements): Promise<VerifyResult> => {
    const parsed = ExactEvmPayload.safeParse(payload.payload);
    if (result.isValid || result.invalidReason !== SIMULATION_FAILED || !parsed.success) return result;
    const { from, nonce, value } = parsed.data.authorization;
    const token = requirements.asset as Hex;
    try {
      const used = await client.readContract({ address: token, abi: eip3009Reads, functionName: 'authorizationState', args: [from as Hex, nonce as Hex] });
      if (used) return { ...result, invalidReason: 'invalid_exact_evm_nonce_already_used' };
      const balance = await client.readContract({ address: token, abi: eip3009Reads, functionName: 'balanceOf', args: [from as Hex] });
      if (balance < BigInt(value)) return { ...result, invalidReason: 'invalid_exact_evm_insufficient_balance' };
    } catch {
      // Unexplained stays unexplained.
    }
    return result;
  };

  return {
    verify: async (payload, requirements) => {
      const args = [payload, requirements] as unknown as FacilitatorArguments;
      return explain(await facilitator.verify(...args), payload, requirements);
    },
    settle: (payload, requirements) => facilitator.settle(...([payload, requirements] as unknown as FacilitatorArguments)),
  };
};
