/**
 * Deploys the contracts the local stack needs (test tokens, the split factory, the deposit factory,
 * the ETH/USD feed) onto anvil, and funds the buyer accounts with test tokens.
 */
import { Contract, ContractFactory, Wallet, ZeroHash, concat, getCreate2Address, getCreateAddress, keccak256, type JsonRpcProvider } from 'ethers';
import {
  depositFactoryArtifact,
  mockAggregatorArtifact,
  splitFactoryArtifact,
  testUsdcArtifact,
  testUsdtArtifact,
  type ContractArtifact,
} from '../../shared/adapters/evm/artifacts';
import { createProvider } from '../../shared/adapters/evm/provider';
import { ANVIL_BUYERS, ANVIL_FEED_OWNER, ANVIL_ONRAMP_SANDBOX } from './anvil';

export interface LocalContracts {
  usdc: string;
  usdt: string;
  splitFactory: string;
  /** MockAggregatorV3, owned by ANVIL_FEED_OWNER. */
  ethUsdFeed: string;
  /** DepositFactory (per-receipt deposit addresses), at the CREATE2 address its code fixes. */
  depositFactory: string;
}

/** The feed's first answer: 3000 USD per ETH, with the feed's 8 decimals. */
export const INITIAL_ETH_USD = 3_000n * 10n ** 8n;
/** What each buyer holds of each test token (6 decimals): 10,000. */
export const BUYER_TOKENS = 10_000n * 10n ** 6n;

// The deployment order fixes the addresses: the relayer's first three nonces, in the order of LocalContracts.
const ORDER: ContractArtifact[] = [testUsdcArtifact, testUsdtArtifact, splitFactoryArtifact];

export const fetchChainId = async (rpcUrl: string): Promise<number> => {
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
 * relayer account and the ETH/USD feed from ANVIL_FEED_OWNER, or finds them: on a chain restored from
 * its state file, where these accounts' first transactions deployed them, the same addresses are
 * returned and nothing is sent. Then the DepositFactory (which creates the DepositForwarder
 * implementation), found by its code likewise. Then tops up each buyer to BUYER_TOKENS of each test token.
 */
export const deployLocalContracts = async (rpcUrl: string, relayerPrivateKey: string): Promise<LocalContracts> => {
  const provider = createProvider(rpcUrl, await fetchChainId(rpcUrl));
  try {
    const feedOwner = new Wallet(ANVIL_FEED_OWNER.privateKey, provider);
    const [[usdc, usdt, splitFactory], ethUsdFeed] = await Promise.all([
      deployRelayerContracts(provider, new Wallet(relayerPrivateKey, provider)),
      deployFeed(provider, feedOwner),
    ]);
    if (!usdc || !usdt || !splitFactory) throw new Error('a local contract has no address');
    // After the relayer's first three transactions, which fix the other contracts' addresses.
    const depositFactory = await deployDepositFactory(provider, new Wallet(relayerPrivateKey, provider));
    const contracts = { usdc: lower(usdc), usdt: lower(usdt), splitFactory: lower(splitFactory), ethUsdFeed: lower(ethUsdFeed), depositFactory: lower(depositFactory) };
    await fundBuyers(feedOwner, [contracts.usdc, contracts.usdt]);
    return contracts;
  } finally {
    provider.destroy();
  }
};

const lower = (address: string) => address.toLowerCase();

const deployRelayerContracts = async (provider: JsonRpcProvider, relayer: Wallet): Promise<string[]> => {
  const expected = ORDER.map((_, nonce) => getCreateAddress({ from: relayer.address, nonce }));
  const codes = await Promise.all(expected.map((address) => provider.getCode(address)));
  if (codes.every((code) => code !== '0x')) return expected;

  // Explicit nonces: the three deployments go out together and still land in this order.
  const first = await provider.getTransactionCount(relayer.address, 'pending');
  return Promise.all(
    ORDER.map(async (artifact, offset) => {
      const factory = new ContractFactory(artifact.abi, artifact.bytecode, relayer);
      const contract = await factory.deploy({ nonce: first + offset });
      await contract.waitForDeployment();
      return contract.getAddress();
    }),
  );
};

/** anvil's built-in CREATE2 deployer (the deterministic deployment proxy): its call data is salt ‖ init code. */
const CREATE2_DEPLOYER = '0x4e59b44847b379578588920ca78fbf26c0b4956c';

/**
 * The deposit factory goes through the CREATE2 deployer, not at a relayer nonce: a chain restored from
 * a state file made before it existed has spent the relayer's next nonces on splits, so a nonce-fixed
 * address could never be deployed there. Its address follows from its code alone (salt zero), and a
 * restart finds it by that code.
 */
const deployDepositFactory = async (provider: JsonRpcProvider, relayer: Wallet): Promise<string> => {
  const address = getCreate2Address(CREATE2_DEPLOYER, ZeroHash, keccak256(depositFactoryArtifact.bytecode));
  if ((await provider.getCode(address)) !== '0x') return address;
  if ((await provider.getCode(CREATE2_DEPLOYER)) === '0x') throw new Error(`no CREATE2 deployer at ${CREATE2_DEPLOYER}: start anvil without --disable-default-create2-deployer`);
  await (await relayer.sendTransaction({ to: CREATE2_DEPLOYER, data: concat([ZeroHash, depositFactoryArtifact.bytecode]) })).wait();
  if ((await provider.getCode(address)) === '0x') throw new Error(`the deposit factory was not deployed at ${lower(address)}`);
  return address;
};

/** The feed is the owner's first transaction, so its address is known without asking anything but its code. */
const deployFeed = async (provider: JsonRpcProvider, owner: Wallet): Promise<string> => {
  const address = getCreateAddress({ from: owner.address, nonce: 0 });
  if ((await provider.getCode(address)) !== '0x') return address;
  if ((await provider.getTransactionCount(owner.address, 'pending')) !== 0) {
    throw new Error(`anvil account ${owner.address} has sent transactions but deployed no ETH/USD feed at ${lower(address)}`);
  }
  const factory = new ContractFactory(mockAggregatorArtifact.abi, mockAggregatorArtifact.bytecode, owner);
  const feed = await factory.deploy(INITIAL_ETH_USD, { nonce: 0 });
  await feed.waitForDeployment();
  return feed.getAddress();
};

/** Who holds test tokens: the buyers, and the sandbox on-ramp (which sells them to card buyers). */
const TOKEN_HOLDERS = [...ANVIL_BUYERS, ANVIL_ONRAMP_SANDBOX];
/** ETH for the sandbox on-ramp's gas (it is not one of anvil's funded accounts). */
const SANDBOX_GAS_WEI = 10n ** 20n;

/**
 * Mints only what a holder lacks of BUYER_TOKENS: a restart of a restored chain mints nothing. The
 * sandbox account gets its gas with anvil's own `anvil_setBalance`.
 */
const fundBuyers = async (minter: Wallet, tokens: string[]) => {
  const provider = minter.provider as JsonRpcProvider;
  if ((await provider.getBalance(ANVIL_ONRAMP_SANDBOX.address)) < SANDBOX_GAS_WEI / 10n) {
    await provider.send('anvil_setBalance', [ANVIL_ONRAMP_SANDBOX.address, `0x${SANDBOX_GAS_WEI.toString(16)}`]);
  }
  const owed = await Promise.all(
    tokens.flatMap((token) =>
      TOKEN_HOLDERS.map(async (buyer) => {
        const contract = new Contract(token, testUsdcArtifact.abi, minter);
        const balance: bigint = await contract.getFunction('balanceOf').staticCall(buyer.address);
        return { contract, buyer: buyer.address, amount: BUYER_TOKENS - balance };
      }),
    ),
  );
  // One after the other: anvil mines each as it arrives, so every wait() finds its receipt at once and
  // leaves no block polling behind to fail when the provider is destroyed.
  for (const { contract, buyer, amount } of owed) {
    if (amount > 0n) await (await contract.getFunction('mint').send(buyer, amount)).wait();
  }
};
