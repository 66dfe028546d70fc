/** Deploys the contracts the local stack needs (test tokens and the split factory) onto anvil. */
import { ContractFactory, Wallet, getCreateAddress } from 'ethers';
import { splitFactoryArtifact, testUsdcArtifact, testUsdtArtifact, type ContractArtifact } from '../../shared/adapters/evm/artifacts';
import { createProvider } from '../../shared/adapters/evm/provider';

export interface LocalContracts {
  usdc: string;
  usdt: string;
  splitFactory: string;
}

// The deployment order fixes the addresses: the relayer's first three nonces, in the order of LocalContracts.
const ORDER: ContractArtifact[] = [testUsdcArtifact, testUsdtArtifact, splitFactoryArtifact];

const fetchChainId = async (rpcUrl: string): Promise<number> => {
  const response = await fetch(rpcUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_chainId', params: [] }),
  });
  const body = (await response.json()) as { result?: string };
  if (!body.result) throw new Error(`no chain id from ${rpcUrl}`);
  return Number(body.result);
};

/**
 * Deploys TestUSDC, TestUSDT and the SplitFactory (which creates the Split implementation) from the
 * relayer account, or finds them: on a chain restored from its state file, where this relayer's first
 * three transactions deployed them, the same addresses are returned and nothing is sent.
 */
export const deployLocalContracts = async (rpcUrl: string, relayerPrivateKey: string): Promise<LocalContracts> => {
  const provider = createProvider(rpcUrl, await fetchChainId(rpcUrl));
  try {
    const relayer = new Wallet(relayerPrivateKey, provider);
    const expected = ORDER.map((artifact, nonce) => ({ artifact, address: getCreateAddress({ from: relayer.address, nonce }) }));
    const codes = await Promise.all(expected.map(({ address }) => provider.getCode(address)));
    if (codes.every((code) => code !== '0x')) return addresses(expected.map(({ address }) => address));

    // Explicit nonces: the three deployments go out together and still land in this order.
    const first = await provider.getTransactionCount(relayer.address, 'pending');
    const deployed = await Promise.all(
      ORDER.map(async (artifact, offset) => {
        const factory = new ContractFactory(artifact.abi, artifact.bytecode, relayer);
        const contract = await factory.deploy({ nonce: first + offset });
        await contract.waitForDeployment();
        return contract.getAddress();
      }),
    );
    return addresses(deployed);
  } finally {
    provider.destroy();
  }
};

const addresses = ([usdc, usdt, splitFactory]: string[]): LocalContracts => {
  if (!usdc || !usdt || !splitFactory) throw new Error('a local contract has no address');
  return { usdc: usdc.toLowerCase(), usdt: usdt.toLowerCase(), splitFactory: splitFactory.toLowerCase() };
};
