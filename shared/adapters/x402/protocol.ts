/**
 * The x402 gate's view of the protocol's packages: `@x402/core` for the header encodings and the
 * envelope schemas, `@x402/evm` for the v1 network names, `@x402/extensions` for sign-in-with-x,
 * and viem for the token's EIP-712 domain and contract-wallet signatures.
 */
import { decodePaymentSignatureHeader, encodePaymentRequiredHeader, encodePaymentResponseHeader } from '@x402/core/http';
import { PaymentPayloadSchema } from '@x402/core/schemas';
import { EVM_NETWORK_CHAIN_ID_MAP } from '@x402/evm/v1';
import { buildSIWxSchema, parseSIWxHeader, verifySIWxSignature } from '@x402/extensions/sign-in-with-x';
import { parseAbi, type Hex } from 'viem';
import type { PaymentPayload, PaymentPayloadV1, SignInWithXPayload } from '../../domain/x402';
import { DependencyUnavailableError } from '../../ports/errors';
import type { X402Protocol } from '../../ports/x402-protocol';
import { isUnreachable, publicClientFor, type ChainEndpoint } from './chain-clients';

type RequiredHeader = Parameters<typeof encodePaymentRequiredHeader>[0];
type ResponseHeader = Parameters<typeof encodePaymentResponseHeader>[0];

const domainAbi = parseAbi([
  // EIP-5267: what OpenZeppelin's EIP712 (the local TestUSDC) exposes.
  'function eip712Domain() view returns (bytes1 fields, string name, string version, uint256 chainId, address verifyingContract, bytes32 salt, uint256[] extensions)',
  // What Circle's USDC exposes instead.
  'function name() view returns (string)',
  'function version() view returns (string)',
]);

const eip3009Abi = parseAbi([
  'function authorizationState(address authorizer, bytes32 nonce) view returns (bool)',
  'event AuthorizationUsed(address indexed authorizer, bytes32 indexed nonce)',
]);
/** How far back the transaction that used an authorization is looked for (authorizations live minutes). */
const AUTHORIZATION_LOOKBACK_BLOCKS = 5_000n;

/** `endpoint`: the chain's RPC, for the token and contract-wallet reads; without one those reads answer 503. */
export const x402Protocol = (endpoint: ChainEndpoint | undefined): X402Protocol => {
  const client = () => {
    if (!endpoint) throw new DependencyUnavailableError('chain', 'x402 needs the chain: CHAIN_RPC_URL is not set');
    return publicClientFor(endpoint);
  };

  const unavailable = (error: unknown) => {
    if (isUnreachable(error)) throw new DependencyUnavailableError('chain', 'the chain RPC is unavailable');
    throw error;
  };

  const readDomain = async (token: Hex) => {
    const chain = client();
    try {
      const [, name, version] = await chain.readContract({ address: token, abi: domainAbi, functionName: 'eip712Domain' });
      return { name, version };
    } catch (error) {
      if (isUnreachable(error)) unavailable(error);
      const [name, version] = await Promise.all([
        chain.readContract({ address: token, abi: domainAbi, functionName: 'name' }),
        chain.readContract({ address: token, abi: domainAbi, functionName: 'version' }),
      ]).catch(unavailable);
      return { name, version };
    }
  };
  // A token's domain never changes: read once per token (a failed read is not remembered).
  const domains = new Map<string, Promise<{ name: string; version: string }>>();

  return {
    v1Network: async (chainId) => Object.entries(EVM_NETWORK_CHAIN_ID_MAP).find(([, id]) => id === chainId)?.[0],
    encodePaymentRequired: async (challenge) => encodePaymentRequiredHeader(challenge as unknown as RequiredHeader),
    encodePaymentResponse: async (settlement) => encodePaymentResponseHeader(settlement as unknown as ResponseHeader),
    decodePayment: async (header) => {
      let decoded: unknown;
      try {
        decoded = decodePaymentSignatureHeader(header);
      } catch {
        return undefined;
      }
      const parsed = PaymentPayloadSchema.safeParse(decoded);
      return parsed.success ? (parsed.data as PaymentPayload | PaymentPayloadV1) : undefined;
    },
    tokenDomain: (token) => {
      const key = token.toLowerCase();
      let domain = domains.get(key);
      if (!domain) {
        domain = readDomain(key as Hex);
        domains.set(key, domain);
        domain.catch(() => domains.delete(key));
      }
      return domain;
    },
    authorizationUse: async (token, authorizer, nonce) => {
      const chain = client();
      const address = token.toLowerCase() as Hex;
      const args = [authorizer.toLowerCase() as Hex, nonce.toLowerCase() as Hex] as const;
      const used = await chain.readContract({ address, abi: eip3009Abi, functionName: 'authorizationState', args }).catch(unavailable);
      if (!used) return { used: false };
      try {
        // Not the client's cached block number (viem keeps it for seconds): the transaction may be newer.
        const latest = await chain.getBlockNumber({ cacheTime: 0 });
        const fromBlock = latest > AUTHORIZATION_LOOKBACK_BLOCKS ? latest - AUTHORIZATION_LOOKBACK_BLOCKS : 0n;
        const logs = await chain.getLogs({ address, event: eip3009Abi[1], args: { authorizer: args[0], nonce: args[1] }, fromBlock, toBlock: 'latest' });
        const transaction = logs[0]?.transactionHash?.toLowerCase();
        return transaction ? { used: true, transaction } : { used: true };
      } catch {
        // Used, by a transaction not found here: the caller keeps what it knows of it.
        return { used: true };
      }
    },
    parseSignInWithX: async (header) => {
      try {
        return parseSIWxHeader(header) as SignInWithXPayload;
      } catch {
        return undefined;
      }
    },
    verifySignInWithX: async (proof) => {
      const chain = client();
      // The extension turns a verifier's throw into "invalid": a node that could not be asked is not a bad signature.
      let unreachable: unknown;
      const result = await verifySIWxSignature(proof as Parameters<typeof verifySIWxSignature>[0], {
        evmVerifier: (args) =>
          chain.verifyMessage(args).catch((error: unknown) => {
            if (isUnreachable(error)) unreachable = error;
            throw error;
          }),
      });
      if (unreachable) unavailable(unreachable);
      return result.isValid;
    },
    signInWithXSchema: async () => buildSIWxSchema() as unknown as Record<string, unknown>,
  };
};
