/**
 * The chains the service knows by name (`CHAIN_NETWORK`) and what the configuration fills in for
 * each; any of these values set on its own wins over the preset's. Base's tokens and feed are the
 * contracts their issuers publish (docs/decisions.md, "Chain networks", names the sources); `local`
 * is the anvil chain of `npm start`, whose test tokens and feed the local stack deploys and names.
 * The x402 network follows from the chain id (`caip2Network`: eip155:8453, eip155:84532).
 */
export const CHAIN_NETWORKS = ['base', 'base-sepolia', 'local'] as const;
export type ChainNetwork = (typeof CHAIN_NETWORKS)[number];

export interface ChainPreset {
  chainId: number;
  /** Circle's USDC there. */
  usdc?: string;
  /** Tether's USDT there; none where Tether issues none. */
  usdt?: string;
  /** Chainlink's ETH/USD (AggregatorV3) there; without it ETH is not offered. */
  ethUsdFeed?: string;
  /** That feed's heartbeat plus a margin for an update that lands late. */
  feedHeartbeatSeconds?: number;
  explorerUrl?: string;
  /** Blocks a payment needs, its own included. */
  confirmations: number;
}

/** anvil's chain id: the local chain's, and no public network's. */
export const LOCAL_CHAIN_ID = 31337;

export const CHAIN_PRESETS: Readonly<Record<ChainNetwork, ChainPreset>> = {
  // Base has no Tether-issued USDT: the USDT-named token there is a third party's bridged copy.
  base: {
    chainId: 8453,
    usdc: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913',
    ethUsdFeed: '0x71041dddad3595F9CEd3DcCFBe3D1F4b0a16Bb70',
    // The feed's 1200-second heartbeat plus 300 seconds.
    feedHeartbeatSeconds: 1500,
    explorerUrl: 'https://basescan.org',
    // The block and one more (about 4 s): past a one-block reorganisation of the sequencer's latest block.
    confirmations: 2,
  },
  'base-sepolia': {
    chainId: 84532,
    usdc: '0x036CbD53842c5426634e7929541eC2318f3dCF7e',
    ethUsdFeed: '0x4aDC67696bA383F43DD60A9e78F2C97Fbbfc7cb1',
    feedHeartbeatSeconds: 1500,
    explorerUrl: 'https://sepolia.basescan.org',
    confirmations: 2,
  },
  // anvil mines a block per transaction: one confirmation is all a payment ever gets. No explorer knows it.
  local: { chainId: LOCAL_CHAIN_ID, confirmations: 1 },
};
