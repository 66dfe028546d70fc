// SPDX-License-Identifier: MIT
pragma solidity ^0.8.26;

import {Clones} from "@openzeppelin/contracts/proxy/Clones.sol";
import {DepositForwarder} from "./DepositForwarder.sol";

/**
 * @title DepositFactory
 * @notice Deploys {DepositForwarder} clones, one per (split, receipt), at CREATE2 addresses with the
 * salt keccak256(abi.encode(split, receiptKey)). The service computes a receipt's deposit address off
 * chain and deploys nothing until there is something to sweep; then {sweepMany} deploys and sweeps a
 * whole batch of deposits in one transaction.
 */
contract DepositFactory {
    /// @notice Tags the receipt key's encoding, so a later derivation can never yield the same keys.
    string public constant RECEIPT_KEY_VERSION = "receipt-deposit-v1";

    /// @notice Gas each deposit's sweep in {sweepMany} gets per token it names. Bounded, so that a token
    /// burning gas costs the batch only this much and fails its own deposit alone; ample for USDC, USDT
    /// and an ETH payment into a split (each well under 100,000). A forwarder's own {DepositForwarder-sweep}
    /// has no bound.
    uint256 public constant SWEEP_GAS_PER_TOKEN = 200_000;
    /// @dev Gas the call to a forwarder costs before its code runs (a warm account, the calldata copy).
    uint256 private constant CALL_OVERHEAD = 10_000;

    /// @notice The code every forwarder delegates to; created here so factory and implementation cannot mismatch.
    address public immutable implementation;

    /// @param tokens What to sweep from this deposit address: token contracts, the zero address for ETH.
    struct Deposit {
        address split;
        bytes32 receiptKey;
        address[] tokens;
    }

    event ForwarderCreated(address indexed forwarder, address indexed split, bytes32 indexed receiptKey);
    /// @notice A deposit in a {sweepMany} batch whose sweep reverted: its funds stay at its address.
    event SweepFailed(address indexed forwarder);

    error ZeroSplit();
    /// @dev Too little gas left to give the next sweep its whole allowance. Without this a sweep starved
    /// by its caller would be reported as failed, and a gas estimate could settle on a limit that fails
    /// every deposit quietly instead of one that sweeps them.
    error InsufficientGas();

    constructor() {
        implementation = address(new DepositForwarder());
    }

    /**
     * @notice The receipt key of `receiptId` of the shop `wallet` on this chain, as the service derives
     * it: keccak256(abi.encode(RECEIPT_KEY_VERSION, chainid, wallet, receiptId)). Here so that anyone
     * can check which receipt a deposit address belongs to.
     */
    function receiptKey(address wallet, string calldata receiptId) external view returns (bytes32) {
        return keccak256(abi.encode(RECEIPT_KEY_VERSION, block.chainid, wallet, receiptId));
    }

    /// @notice The deposit address of `key` paying into `split`, deployed or not.
    function predictForwarder(address split, bytes32 key) public view returns (address) {
        return Clones.predictDeterministicAddress(implementation, _salt(split, key));
    }

    /**
     * @notice Creates the forwarder of `key` paying into `split`, or returns the existing one.
     * Idempotent, so a retried batch never fails on a deposit already deployed. ETH the address held
     * before stays in it (CREATE2 onto a funded address keeps the balance) for the sweep.
     */
    function deployForwarder(address split, bytes32 key) public returns (address forwarder) {
        bytes32 salt = _salt(split, key);
        forwarder = Clones.predictDeterministicAddress(implementation, salt);
        if (forwarder.code.length > 0) return forwarder;
        Clones.cloneDeterministic(implementation, salt);
        DepositForwarder(payable(forwarder)).initialize(split);
        emit ForwarderCreated(forwarder, split, key);
    }

    /**
     * @notice For each deposit: deploys its forwarder on first use, then sweeps its `tokens` to its
     * split (none: deploys only). Anyone may call it; the funds can only go to each deposit's own split.
     * A deposit whose sweep reverts or runs out of its {SWEEP_GAS_PER_TOKEN} allowance (a token that
     * refuses the address, say) is reported with {SweepFailed} and keeps its funds, so it does not hold
     * up the rest of the batch; its forwarder stays deployed. Reverts with {InsufficientGas} when sent
     * with too little gas to give every sweep its whole allowance.
     */
    function sweepMany(Deposit[] calldata deposits) external {
        for (uint256 i; i < deposits.length; ++i) {
            Deposit calldata deposit = deposits[i];
            address forwarder = deployForwarder(deposit.split, deposit.receiptKey);
            uint256 tokenCount = deposit.tokens.length;
            if (tokenCount == 0) continue;
            uint256 gasLimit = SWEEP_GAS_PER_TOKEN * tokenCount;
            // A call gets at most 63/64 of the gas left (EIP-150).
            if (gasleft() < (gasLimit * 64) / 63 + CALL_OVERHEAD) revert InsufficientGas();
            // A bare catch copies no return data: a huge revert reason cannot make the batch expensive.
            try DepositForwarder(payable(forwarder)).sweep{gas: gasLimit}(deposit.tokens) {} catch {
                emit SweepFailed(forwarder);
            }
        }
    }

    /// @dev A zero split would make an address nothing can ever be swept from; refused before any hashing.
    function _salt(address split, bytes32 key) private pure returns (bytes32) {
        if (split == address(0)) revert ZeroSplit();
        return keccak256(abi.encode(split, key));
    }
}
