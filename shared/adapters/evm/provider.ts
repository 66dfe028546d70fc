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
import { NONCE_CLASH, relayerTurn } from './relayer-turn';

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

/** Sends of one transaction when the node says its nonce was taken meanwhile (by another process of the key). */
const NONCE_ATTEMPTS = 3;

/**
 * The relayer's signer. Every send takes its turn at the key's one queue in this process
 * (`relayerTurn`, shared with the x402 settler) and reads the account's pending nonce then, after the
 * transaction is estimated: no cached count that another sender of the key has made stale (ethers'
 * `Wallet` caches one for 250 ms; a `NonceManager` counts its own sends only), and a reverting call
 * takes no nonce. A nonce another process took between the read and the send is taken again fresh.
 */
export class RelayerSigner extends NonceManager {
  constructor(privateKey: string, provider: JsonRpcProvider) {
    super(new Wallet(privateKey, provider));
  }

  override async sendTransaction(tx: TransactionRequest): Promise<TransactionResponse> {
    const address = await this.signer.getAddress();
    return relayerTurn(address, async () => {
      for (let attempt = 1; ; attempt++) {
        const populated = await this.signer.populateTransaction({ ...tx, nonce: undefined });
        populated.nonce = await this.signer.provider!.getTransactionCount(address, 'pending');
        try {
          return await this.signer.sendTransaction(populated);
        } catch (error) {
          if (attempt >= NONCE_ATTEMPTS || !NONCE_CLASH.test(error instanceof Error ? error.message : String(error))) throw error;
        }
      }
    });
  }
}

export const createRelayer = (privateKey: string, provider: JsonRpcProvider): RelayerSigner => new RelayerSigner(privateKey, provider);
