// SPDX-License-Identifier: MIT
pragma solidity ^0.8.26;

import {ERC20} from "@openzeppelin/contracts/token/ERC20/ERC20.sol";
import {EIP712} from "@openzeppelin/contracts/utils/cryptography/EIP712.sol";
import {ERC3009} from "@openzeppelin/contracts/token/ERC20/extensions/draft-ERC3009.sol";

/**
 * @title TestUSDC
 * @notice USDC as x402 payers see it (6 decimals, EIP-712 domain "USD Coin" / "2", EIP-3009
 * transferWithAuthorization), with a mint open to anyone. For tests and the local chain only.
 */
contract TestUSDC is ERC3009 {
    constructor() ERC20("USD Coin", "USDC") EIP712("USD Coin", "2") {}

    function decimals() public pure override returns (uint8) {
        return 6;
    }

    function mint(address to, uint256 amount) external {
        _mint(to, amount);
    }
}
