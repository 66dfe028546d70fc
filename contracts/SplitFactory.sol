// SPDX-License-Identifier: MIT
pragma solidity ^0.8.26;

import {Clones} from "@openzeppelin/contracts/proxy/Clones.sol";
import {Split} from "./Split.sol";

/**
 * @title SplitFactory
 * @notice Deploys {Split} clones at addresses determined by their payees and basis points, so one
 * payee set has exactly one split and anyone can compute its address before it exists.
 */
contract SplitFactory {
    /// @notice The code every split delegates to; created here so factory and implementation cannot mismatch.
    address public immutable implementation;

    event SplitCreated(address indexed split, address indexed merchant, address[] payees, uint16[] bps);

    constructor() {
        implementation = address(new Split());
    }

    /**
     * @notice Creates the split for `payees` (merchant first) and `bps`, or returns the existing one.
     * Idempotent, so a retried or repeated request never fails and never creates a second split.
     */
    function createSplit(address[] calldata payees, uint16[] calldata bps) external returns (address split) {
        bytes32 salt = _salt(payees, bps);
        split = Clones.predictDeterministicAddress(implementation, salt);
        if (split.code.length > 0) return split;
        Clones.cloneDeterministic(implementation, salt);
        // Validation lives in the initializer: an invalid set reverts and leaves no clone behind.
        Split(payable(split)).initialize(payees, bps);
        emit SplitCreated(split, payees[0], payees, bps);
    }

    function predictSplit(address[] calldata payees, uint16[] calldata bps) external view returns (address) {
        return Clones.predictDeterministicAddress(implementation, _salt(payees, bps));
    }

    function _salt(address[] calldata payees, uint16[] calldata bps) private pure returns (bytes32) {
        return keccak256(abi.encode(payees, bps));
    }
}
