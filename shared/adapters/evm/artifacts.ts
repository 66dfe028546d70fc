/**
 * The compiled contracts (`npm run contracts:build` writes them from contracts/*.sol). Static JSON
 * imports, so the Functions bundle carries them and needs no compiler or file access at run time.
 */
import type { InterfaceAbi } from 'ethers';
import depositFactoryJson from '../../../contracts/artifacts/DepositFactory.json';
import depositForwarderJson from '../../../contracts/artifacts/DepositForwarder.json';
import mockAggregatorJson from '../../../contracts/artifacts/MockAggregatorV3.json';
import splitJson from '../../../contracts/artifacts/Split.json';
import splitFactoryJson from '../../../contracts/artifacts/SplitFactory.json';
import testUsdcJson from '../../../contracts/artifacts/TestUSDC.json';
import testUsdtJson from '../../../contracts/artifacts/TestUSDT.json';

export interface ContractArtifact {
  contractName: string;
  abi: InterfaceAbi;
  /** Creation bytecode, 0x-prefixed. */
  bytecode: string;
}

export const splitArtifact: ContractArtifact = splitJson;
export const splitFactoryArtifact: ContractArtifact = splitFactoryJson;
/** Per-receipt deposit addresses: the factory and the forwarder its clones delegate to. */
export const depositFactoryArtifact: ContractArtifact = depositFactoryJson;
export const depositForwarderArtifact: ContractArtifact = depositForwarderJson;
/** Test tokens: deployed on the local chain only. */
export const testUsdcArtifact: ContractArtifact = testUsdcJson;
export const testUsdtArtifact: ContractArtifact = testUsdtJson;
/** The local chain's ETH/USD feed, with an answer its deployer sets. */
export const mockAggregatorArtifact: ContractArtifact = mockAggregatorJson;
