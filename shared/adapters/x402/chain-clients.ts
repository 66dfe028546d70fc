/**
 * viem clients for the deployment's chain: the protocol's EVM package reads, verifies and writes
 * through them. One public client per RPC endpoint in a process, shared by the settler and the
 * protocol's reads.
 */
import { createPublicClient, createWalletClient, defineChain, http, type Chain, type Hex, type PublicClient, type Transport } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import * as knownChains from 'viem/chains';
import { RPC_TIMEOUT_MS, isLocalRpc } from '../evm/rpc';

export interface ChainEndpoint {
  rpcUrl: string;
  chainId: number;
}

/**
 * viem's own definition of the chain when it has one (an OP-stack chain such as Base comes with its
 * fee estimation and formatters); a plain EVM chain otherwise.
 */
export const viemChain = ({ rpcUrl, chainId }: ChainEndpoint): Chain =>
  (Object.values(knownChains) as unknown[]).find((chain): chain is Chain => typeof chain === 'object' && chain !== null && (chain as Chain).id === chainId) ??
  defineChain({
    id: chainId,
    name: `EVM chain ${chainId}`,
    nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
    rpcUrls: { default: { http: [rpcUrl] } },
  });

/** Each call answers within the RPC timeout; locally (anvil mines at once) receipts are polled every 20 ms, with no retries. */
const transportFor = (rpcUrl: string): Transport => http(rpcUrl, { timeout: RPC_TIMEOUT_MS, ...(isLocalRpc(rpcUrl) && { retryCount: 0 }) });
const pollingIntervalFor = (rpcUrl: string) => (isLocalRpc(rpcUrl) ? 20 : 1_000);

const publicClients = new Map<string, PublicClient>();

export const publicClientFor = (endpoint: ChainEndpoint): PublicClient => {
  const key = `${endpoint.chainId}@${endpoint.rpcUrl}`;
  let client = publicClients.get(key);
  if (!client) {
    client = createPublicClient({ chain: viemChain(endpoint), transport: transportFor(endpoint.rpcUrl), pollingInterval: pollingIntervalFor(endpoint.rpcUrl) }) as PublicClient;
    publicClients.set(key, client);
  }
  return client;
};

/** The relayer's wallet client: it signs and sends; nonces are the caller's to give (see the settler). */
export const relayerWalletFor = (endpoint: ChainEndpoint, privateKey: string) =>
  createWalletClient({ account: privateKeyToAccount(privateKey as Hex), chain: viemChain(endpoint), transport: transportFor(endpoint.rpcUrl) });

// viem's transport failures, and Node's socket errors beneath them: the call never got an answer.
const UNREACHABLE_NAMES = new Set(['HttpRequestError', 'TimeoutError', 'WebSocketRequestError', 'SocketClosedError']);
const UNREACHABLE_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'ETIMEDOUT', 'EPIPE', 'UND_ERR_SOCKET']);

/** Whether an error means the node could not be reached (rather than that it answered with a failure). */
export const isUnreachable = (error: unknown): boolean => {
  for (let cause = error, depth = 0; cause && depth < 10; cause = (cause as { cause?: unknown }).cause, depth++) {
    const { name, code } = cause as { name?: unknown; code?: unknown };
    if ((typeof name === 'string' && UNREACHABLE_NAMES.has(name)) || (typeof code === 'string' && UNREACHABLE_CODES.has(code))) return true;
  }
  return false;
};
