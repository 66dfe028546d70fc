// SPDX-License-Identifier: MIT
pragma solidity ^0.8.26;

import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {SafeERC20} from "@openzeppelin/contracts/token/ERC20/utils/SafeERC20.sol";
import {Address} from "@openzeppelin/contracts/utils/Address.sol";
import {ReentrancyGuardTransient} from "@openzeppelin/contracts/utils/ReentrancyGuardTransient.sol";

/**
 * @title DepositForwarder
 * @notice One receipt's deposit address: whatever it holds, ETH or any ERC-20, it can only send to the
 * one split it was made for. Anyone may trigger that; nobody can name another recipient, because no
 * function takes one. A token the shop does not accept goes to the split the same way (the split then
 * holds it, and its own distribute(token) pays it out in shares).
 *
 * Deployed as an ERC-1167 clone by {DepositFactory} at a CREATE2 address fixed by the split and the
 * receipt, so the address is known, and can be paid, before any code is there. Clones never run a
 * constructor: the factory sets the split right after cloning, in the same transaction.
 */
contract DepositForwarder is ReentrancyGuardTransient {
    using SafeERC20 for IERC20;

    /// @notice The only contract allowed to set the split. An immutable lives in the implementation's
    /// code, so every clone sees the factory that created the implementation.
    address public immutable factory;
    /// @dev The implementation's own address: a clone runs the same code at another address.
    address private immutable _self;

    /// @notice Where everything held here goes: the shop's split. Zero until the factory sets it.
    address public split;

    error NotFactory();
    error ZeroSplit();
    error AlreadyInitialized();
    error NotInitialized();
    error NotAClone();

    constructor() {
        factory = msg.sender;
        _self = address(this);
    }

    /**
     * @notice Binds this clone to `split_`, once. Only the factory may call it, and it does so in the
     * transaction that creates the clone, so nobody can bind a fresh clone first. A one-slot guard
     * rather than OpenZeppelin's Initializable: that would write a second storage slot, some 20,000
     * gas on every deposit address. The implementation itself can never be bound, so it cannot sweep.
     */
    function initialize(address split_) external {
        if (msg.sender != factory) revert NotFactory();
        if (address(this) == _self) revert NotAClone();
        if (split_ == address(0)) revert ZeroSplit();
        if (split != address(0)) revert AlreadyInitialized();
        split = split_;
    }

    /// @notice ETH sent after deployment is kept for the next sweep (a sender's 2,300-gas transfer
    /// could not pay for forwarding it here).
    receive() external payable {}

    /**
     * @notice Sends this address's whole balance of each of `tokens` (the zero address: ETH) to the
     * split. A zero balance is skipped. SafeERC20 accepts tokens that return no bool (USDT) and
     * reverts on a false or a revert; the guard stops a token's transfer from re-entering, though
     * every path here pays only the split anyway.
     */
    function sweep(address[] calldata tokens) external nonReentrant {
        address to = split;
        if (to == address(0)) revert NotInitialized();
        for (uint256 i; i < tokens.length; ++i) {
            address token = tokens[i];
            if (token == address(0)) {
                uint256 amount = address(this).balance;
                if (amount > 0) Address.sendValue(payable(to), amount);
            } else {
                uint256 amount = IERC20(token).balanceOf(address(this));
                if (amount > 0) IERC20(token).safeTransfer(to, amount);
            }
        }
    }
}
