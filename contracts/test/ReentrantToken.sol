// SPDX-License-Identifier: MIT
pragma solidity ^0.8.26;

import {ERC20} from "@openzeppelin/contracts/token/ERC20/ERC20.sol";

/**
 * @title ReentrantToken
 * @notice A hostile ERC-20: before each transfer it makes a call its deployer chose (re-entering the
 * contract that is sending it, say) and records how that call ended, then transfers as usual. For
 * tests only: it shows that a token cannot use a sweep to send anything anywhere but the split.
 */
contract ReentrantToken is ERC20 {
    address public hookTarget;
    bytes public hookData;
    bool public hookCalled;
    bool public hookSucceeded;
    bytes public hookResult;

    constructor() ERC20("Reentrant Token", "REN") {}

    function mint(address to, uint256 amount) external {
        _mint(to, amount);
    }

    function setHook(address target, bytes calldata data) external {
        hookTarget = target;
        hookData = data;
        hookCalled = false;
    }

    function transfer(address to, uint256 value) public override returns (bool) {
        if (hookTarget != address(0) && !hookCalled) {
            hookCalled = true;
            (hookSucceeded, hookResult) = hookTarget.call(hookData);
        }
        return super.transfer(to, value);
    }
}
