// SPDX-License-Identifier: MIT
pragma solidity ^0.8.26;

import {Split} from "../Split.sol";

/**
 * @title RejectingPayee
 * @notice A split payee whose ETH receipt can be switched between rejecting, accepting and
 * re-entering the split, to test that one payee cannot block or drain a distribution.
 */
contract RejectingPayee {
    enum Mode {
        Reject,
        Accept,
        Reenter
    }

    Mode public mode;

    function setMode(Mode mode_) external {
        mode = mode_;
    }

    function withdrawFrom(Split split) external {
        split.withdraw();
    }

    function withdrawFromTo(Split split, address payable to) external {
        split.withdrawTo(to);
    }

    receive() external payable {
        if (mode == Mode.Reject) revert("RejectingPayee: no ETH");
        if (mode == Mode.Reenter) Split(payable(msg.sender)).distribute(address(0));
    }
}
