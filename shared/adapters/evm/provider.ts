/** JSON-RPC provider and relayer signer, tuned for the chain they talk to. */
import {
  FetchRequest,
  JsonRpcProvider,
  Network,
  NonceManager,
  Wallet,
  type TransactionRequest,
  type TransactionResponse,
} from 'ethers';
import { RPC_TIMEOUT_MS, isLocalRpc } from './rpc';

export { RPC_TIMEOUT_MS, isLocalRpc };

/**
 * A provider that never asks the node which network it is (the chain id is configuration).
 * Locally (anvil mines each transaction at once) nothing is cached and receipts are polled every
 * 20 ms: ethers' defaults (250 ms cache, 4 s polling) make every `wait()` take seconds and a
 * just-sent transaction invisible to the next read. Batching is off locally for the same reason:
 * it holds each request back to collect others.
 */
export const createProvider = (rpcUrl: string, chainId: number): JsonRpcProvider => {
  const request = new FetchRequest(rpcUrl);
  request.timeout = RPC_TIMEOUT_MS;
  const network = Network.from(chainId);
  const local = isLocalRpc(rpcUrl);
  return new JsonRpcProvider(request, network, {
    staticNetwork: network,
    ...(local ? { cacheTimeout: -1, pollingInterval: 20, batchMaxCount: 1 } : {}),
  });
};

/**
 * The relayer's signer. ethers' `Wallet` reads the account's nonce for every transaction (and caches
 * it for 250 ms), so two quick transactions get the same nonce; a `NonceManager` counts them instead.
 * This one also estimates the transaction before it takes a nonce, and forgets its count when a send
 * fails, so a reverting call or a dropped request leaves no gap that would stall every later transaction.
 */
export class RelayerSigner extends NonceManager {
  constructor(privateKey: string, provider: JsonRpcProvider) {
    super(new Wallet(privateKey, provider));
  }

  override async sendTransaction(tx: TransactionRequest): Promise<TransactionResponse> {
    const populated = await this.signer.populateTransaction(tx);
    const nonce = this.getNonce('pending');
    this.increment();
    try {
      populated.nonce = await nonce;
      return await this.signer.sendTransaction(populated);
    } catch (error) {
      this.reset();
      throw error;
    }
  }
}

export const createRelayer = (privateKey: string, provider: JsonRpcProvider): RelayerSigner => new RelayerSigner(privateKey, provider);
