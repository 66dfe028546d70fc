// SPDX-License-Identifier: MIT
pragma solidity ^0.8.26;

/**
 * @title TestFreezableToken
 * @notice A USDT-style token (6 decimals; `transfer` returns no value) whose owner can freeze accounts,
 * with a mint open to anyone. How a transfer from or to a frozen account fails is fixed at deployment:
 * - Revert: reverts, as USDT and USDC do;
 * - ReturnFalse: returns false and moves nothing, as some older tokens do;
 * - BurnGas: consumes all the gas it was given, as a token calling a hostile recipient hook would.
 * For tests only: it shows that one refused payee does not stop a split paying the others.
 */
contract TestFreezableToken {
    enum Refusal {
        Revert,
        ReturnFalse,
        BurnGas
    }

    string public constant name = "Freezable Token";
    string public constant symbol = "FRZ";
    uint8 public constant decimals = 6;

    address public immutable owner;
    Refusal public immutable refusal;

    uint256 public totalSupply;
    mapping(address account => uint256) public balanceOf;
    mapping(address account => bool) public isBlacklisted;

    event Transfer(address indexed from, address indexed to, uint256 value);

    error NotOwner();
    error AccountBlacklisted(address account);
    error InsufficientBalance(address account, uint256 balance, uint256 needed);

    constructor(Refusal refusal_) {
        owner = msg.sender;
        refusal = refusal_;
    }

    function blacklist(address account) external {
        if (msg.sender != owner) revert NotOwner();
        isBlacklisted[account] = true;
    }

    function unBlacklist(address account) external {
        if (msg.sender != owner) revert NotOwner();
        isBlacklisted[account] = false;
    }

    function mint(address to, uint256 amount) external {
        totalSupply += amount;
        balanceOf[to] += amount;
        emit Transfer(address(0), to, amount);
    }

    /// @dev No return value on success, as USDT; a false word when refusing in the ReturnFalse mode.
    function transfer(address to, uint256 value) external {
        if (isBlacklisted[msg.sender] || isBlacklisted[to]) {
            Refusal how = refusal;
            if (how == Refusal.ReturnFalse) {
                assembly ("memory-safe") {
                    mstore(0x00, 0)
                    return(0x00, 0x20)
                }
            }
            if (how == Refusal.BurnGas) {
                assembly ("memory-safe") {
                    invalid()
                }
            }
            revert AccountBlacklisted(isBlacklisted[msg.sender] ? msg.sender : to);
        }
        uint256 balance = balanceOf[msg.sender];
        if (balance < value) revert InsufficientBalance(msg.sender, balance, value);
        unchecked {
            balanceOf[msg.sender] = balance - value;
        }
        balanceOf[to] += value;
        emit Transfer(msg.sender, to, value);
    }
}
