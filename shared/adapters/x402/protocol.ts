/**
 * The x402 gate's view of the protocol's packages: `@x402/core` for the header encodings and the
 * envelope schemas, `@x402/evm` for the v1 network names, `@x402/extensions` for sign-in-with-x,
 * and viem for the token's EIP-712 domain and contract-wallet signatures.
 */
import { decodePaymentSignatureHeader, encodePaymentRequiredHeader, encodePaymentResponseHeader } from '@x402/core/http';
import { PaymentPayloadSchema } from '@x402/core/schemas';
import { EVM_NETWORK_CHAIN_ID_MAP } from '@x402/evm/v1';
import { buildSIWxSchema, parseSIWxHeader, verifySIWxSignature } from '@x402/extensions/sign-in-with-x';
import { encodeEventTopics, pad, parseAbi, type Hex, type PublicClient } from 'viem';
import type { PaymentPayload, PaymentPayloadV1, SignInWithXPayload } from '../../domain/x402';
import { DependencyUnavailableError } from '../../ports/errors';
import type { AuthorizationOutcome, AuthorizationTerms, X402Protocol } from '../../ports/x402-protocol';
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
  'event AuthorizationCanceled(address indexed authorizer, bytes32 indexed nonce)',
  'event Transfer(address indexed from, address indexed to, uint256 value)',
]);
const [, usedEvent, canceledEvent] = eip3009Abi;
const topicOf = (eventName: 'AuthorizationUsed' | 'Transfer') => encodeEventTopics({ abi: eip3009Abi, eventName })[0]!;
const USED = topicOf('AuthorizationUsed');
const TRANSFER = topicOf('Transfer');
/** How far back the transaction that used an authorization is looked for (authorizations live minutes). */
const AUTHORIZATION_LOOKBACK_BLOCKS = 5_000n;

const word = (address: string) => pad(address.toLowerCase() as Hex, { size: 32 }).toLowerCase();

/**
 * The payment a transaction made of an authorization, if it made it: it succeeded, and the token's
 * `AuthorizationUsed(from, nonce)` log is followed at once by its `Transfer(from, to, value)` (the
 * order EIP-3009 tokens emit them in, USDC's and OpenZeppelin's alike), so the transfer is this
 * authorization's, not another one's in the same transaction. Undefined when it made none, or is
 * not mined.
 */
const paymentIn = async (chain: PublicClient, token: Hex, terms: AuthorizationTerms, hash: string): Promise<{ transaction: string; blockNumber: number; logIndex: number } | undefined> => {
  const receipt = await chain.getTransactionReceipt({ hash: hash as Hex }).catch((error: unknown) => {
    if (isUnreachable(error)) throw new DependencyUnavailableError('chain', 'the chain RPC is unavailable');
    return undefined;
  });
  if (!receipt || receipt.status !== 'success') return undefined;
  const logs = receipt.logs;
  const [from, to, nonce] = [word(terms.from), word(terms.to), terms.nonce.toLowerCase()];
  for (let index = 0; index + 1 < logs.length; index++) {
    const used = logs[index]!;
    const transfer = logs[index + 1]!;
    if (used.address.toLowerCase() !== token || used.topics[0] !== USED || used.topics[1]?.toLowerCase() !== from || used.topics[2]?.toLowerCase() !== nonce) continue;
    const moved =
      transfer.address.toLowerCase() === token &&
      transfer.topics[0] === TRANSFER &&
      transfer.topics[1]?.toLowerCase() === from &&
      transfer.topics[2]?.toLowerCase() === to &&
      BigInt(transfer.data) === BigInt(terms.value);
    return moved ? { transaction: receipt.transactionHash.toLowerCase(), blockNumber: Number(receipt.blockNumber), logIndex: transfer.logIndex } : undefined;
  }
  return undefined;
};

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
    authorizationOutcome: async (token, terms, hint): Promise<AuthorizationOutcome> => {
      const chain = client();
      const address = token.toLowerCase() as Hex;
      if (hint) {
        const paid = await paymentIn(chain, address, terms, hint);
        if (paid) return { state: 'paid', ...paid };
      }
      const args = { authorizer: terms.from.toLowerCase() as Hex, nonce: terms.nonce.toLowerCase() as Hex };
      const used = await chain.readContract({ address, abi: eip3009Abi, functionName: 'authorizationState', args: [args.authorizer, args.nonce] }).catch(unavailable);
      if (!used) return { state: 'unused' };
      // Not the client's cached block number (viem keeps it for seconds): the transaction may be newer.
      const latest = await chain.getBlockNumber({ cacheTime: 0 }).catch(unavailable);
      const fromBlock = latest > AUTHORIZATION_LOOKBACK_BLOCKS ? latest - AUTHORIZATION_LOOKBACK_BLOCKS : 0n;
      const [uses, cancels] = await Promise.all(
        [usedEvent, canceledEvent].map((event) => chain.getLogs({ address, event, args, fromBlock, toBlock: 'latest' })),
      ).catch((error: unknown) => {
        throw new DependencyUnavailableError('chain', `the authorization's transaction could not be looked for: ${error instanceof Error ? error.message : String(error)}`);
      });
      for (const log of uses!) {
        const paid = await paymentIn(chain, address, terms, log.transactionHash!);
        if (paid) return { state: 'paid', ...paid };
      }
      if (uses!.length > 0 || cancels!.length > 0) return { state: 'spent' };
      // Used, by a transaction not found here: neither paid nor refused until it is found.
      throw new DependencyUnavailableError('chain', 'the authorization was used by a transaction not found among the recent blocks');
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
