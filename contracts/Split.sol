// SPDX-License-Identifier: MIT
pragma solidity ^0.8.26;

import {Initializable} from "@openzeppelin/contracts/proxy/utils/Initializable.sol";
import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {SafeERC20} from "@openzeppelin/contracts/token/ERC20/utils/SafeERC20.sol";
import {Math} from "@openzeppelin/contracts/utils/math/Math.sol";
import {ReentrancyGuardTransient} from "@openzeppelin/contracts/utils/ReentrancyGuardTransient.sol";

/**
 * @title Split
 * @notice Pays out everything it holds, ETH or an ERC-20, to fixed payees in fixed basis points.
 * Payee 0 is the merchant and also receives the rounding remainder, so nothing is ever left behind.
 * A payee that cannot be paid (an ETH payee that rejects it, a token that refuses the payee, as USDC
 * and USDT do for a frozen account) is credited its share instead and pulls it later: one payee never
 * blocks the others.
 *
 * Deployed as an ERC-1167 clone by {SplitFactory}: clones never run a constructor, hence the
 * initializer. The transient reentrancy guard needs no storage set up, so it works in a clone as is.
 */
contract Split is Initializable, ReentrancyGuardTransient {
    using SafeERC20 for IERC20;

    uint256 public constant TOTAL_BPS = 10_000;
    uint256 public constant MAX_PAYEES = 32;
    /// @notice Gas handed to an ETH payee. Bounded so that a payee burning gas cannot make the
    /// distribution run out of gas for everyone; ample for a smart-contract wallet's receive().
    uint256 public constant PAYEE_GAS_LIMIT = 100_000;
    /// @notice Gas handed to a token's transfer to a payee. Bounded for the same reason: a token may call
    /// the payee (an ERC-777 hook, say), or burn gas itself. Ample for USDC and USDT (well under 100,000);
    /// a transfer that needs more only makes the payee credited, and {withdrawToken} has no bound.
    uint256 public constant TOKEN_GAS_LIMIT = 200_000;
    /// @dev Gas a payee call costs before its callee runs (a cold account, a value transfer, a new account).
    uint256 private constant CALL_OVERHEAD = 40_000;

    address[] private _payees;
    uint16[] private _bps;

    /// @notice Block of initialization: lets off-chain code find the creation log without scanning the chain.
    uint64 public createdAtBlock;

    /// @notice ETH owed to payees whose transfer failed; they pull it with {withdraw}.
    mapping(address payee => uint256 amount) public credits;
    /// @notice Sum of {credits}: ETH held here that belongs to no later distribution.
    uint256 public totalCredits;
    /// @notice Tokens owed to payees the token refused; they pull them with {withdrawToken}.
    mapping(address token => mapping(address payee => uint256 amount)) public tokenCredits;
    /// @notice Sum of {tokenCredits} per token: tokens held here that belong to no later distribution.
    mapping(address token => uint256 amount) public totalTokenCredits;

    event PaymentReceived(address indexed from, uint256 amount);
    /// @dev token is the zero address for ETH.
    event Distributed(address indexed token, address indexed payee, uint256 amount);
    event Credited(address indexed payee, uint256 amount);
    event Withdrawn(address indexed payee, address to, uint256 amount);
    event TokenCredited(address indexed token, address indexed payee, uint256 amount);
    event TokenWithdrawn(address indexed token, address indexed payee, address to, uint256 amount);

    error NoPayees();
    error TooManyPayees(uint256 count);
    error LengthMismatch(uint256 payees, uint256 bps);
    error ZeroAddressPayee(uint256 index);
    error DuplicatePayee(address payee);
    error InvalidBpsTotal(uint256 total);
    error NothingToWithdraw();
    error WithdrawFailed();
    error ZeroAddressRecipient();
    /// @dev Too little gas left to give the next payee its whole allowance: a caller must not be able to
    /// starve a payee into being credited instead of paid.
    error InsufficientGas();

    constructor() {
        // The implementation behind the clones must never hold payees of its own.
        _disableInitializers();
    }

    function initialize(address[] calldata payees_, uint16[] calldata bps_) external initializer {
        uint256 count = payees_.length;
        if (count == 0) revert NoPayees();
        if (count > MAX_PAYEES) revert TooManyPayees(count);
        if (bps_.length != count) revert LengthMismatch(count, bps_.length);
        uint256 total;
        for (uint256 i; i < count; ++i) {
            address payee = payees_[i];
            if (payee == address(0)) revert ZeroAddressPayee(i);
            // Credits are kept per address: one payee listed twice would blur whose share is whose.
            for (uint256 j; j < i; ++j) {
                if (payees_[j] == payee) revert DuplicatePayee(payee);
            }
            total += bps_[i];
        }
        if (total != TOTAL_BPS) revert InvalidBpsTotal(total);
        _payees = payees_;
        _bps = bps_;
        createdAtBlock = uint64(block.number);
    }

    receive() external payable {
        emit PaymentReceived(msg.sender, msg.value);
    }

    /// @notice The payees (merchant first) and their basis points, as initialized.
    function payees() external view returns (address[] memory accounts, uint16[] memory bps) {
        return (_payees, _bps);
    }

    function merchant() external view returns (address) {
        return _payees[0];
    }

    /// @notice What {distribute} would hand out now: credited ETH and credited tokens are not part of it.
    function distributable(address token) public view returns (uint256) {
        if (token == address(0)) return address(this).balance - totalCredits;
        uint256 balance = IERC20(token).balanceOf(address(this));
        uint256 owed = totalTokenCredits[token];
        // A token can take from its holders (a seizure, a negative rebase): then there is nothing to split.
        return balance > owed ? balance - owed : 0;
    }

    /**
     * @notice Pays every payee its share of the whole balance of `token` (the zero address: ETH).
     * Anyone may call it; the money can only go to the payees.
     * A payee that cannot be paid is credited instead, so it does not block the others: an ETH payee
     * that rejects the transfer, or a token transfer that reverts, returns false or runs out of its gas
     * (a frozen or blacklisted payee). Reverts with {InsufficientGas} when called with too little gas to
     * give every payee its whole allowance.
     */
    function distribute(address token) external nonReentrant {
        uint256 amount = distributable(token);
        if (amount == 0) return;
        uint256 count = _payees.length;
        uint256[] memory shares = new uint256[](count);
        uint256 othersTotal;
        for (uint256 i = 1; i < count; ++i) {
            shares[i] = Math.mulDiv(amount, _bps[i], TOTAL_BPS);
            othersTotal += shares[i];
        }
        // Rounding down every other share leaves the remainder here, with the merchant.
        shares[0] = amount - othersTotal;
        for (uint256 i; i < count; ++i) {
            if (shares[i] == 0) continue;
            if (token == address(0)) _payEth(_payees[i], shares[i]);
            else _payToken(token, _payees[i], shares[i]);
        }
    }

    /// @notice Sends the caller's ETH credit to the caller.
    function withdraw() external {
        withdrawTo(payable(msg.sender));
    }

    /// @notice Sends the caller's ETH credit to `to`: for a payee contract that cannot receive ETH itself.
    function withdrawTo(address payable to) public nonReentrant {
        uint256 amount = credits[msg.sender];
        if (amount == 0) revert NothingToWithdraw();
        credits[msg.sender] = 0;
        totalCredits -= amount;
        // The payee asked for it, so it gets all the gas; a failure keeps the credit (the revert undoes the above).
        (bool ok, ) = to.call{value: amount}("");
        if (!ok) revert WithdrawFailed();
        emit Withdrawn(msg.sender, to, amount);
    }

    /**
     * @notice Sends the caller's credit in `token` to `to`: the caller itself, or another address of its
     * own when the token still refuses the payee's (a frozen account).
     */
    function withdrawToken(address token, address to) external nonReentrant {
        if (to == address(0)) revert ZeroAddressRecipient();
        uint256 amount = tokenCredits[token][msg.sender];
        if (amount == 0) revert NothingToWithdraw();
        tokenCredits[token][msg.sender] = 0;
        totalTokenCredits[token] -= amount;
        // The payee asked for it, so the token gets all the gas; a failure keeps the credit (the revert undoes the above).
        IERC20(token).safeTransfer(to, amount);
        emit TokenWithdrawn(token, msg.sender, to, amount);
    }

    function _payEth(address payee, uint256 amount) private {
        bool ok;
        uint256 gasLimit = PAYEE_GAS_LIMIT;
        _requireGasFor(gasLimit);
        // Returned data is never copied, so a payee cannot make this call expensive with a huge revert reason.
        assembly ("memory-safe") {
            ok := call(gasLimit, payee, amount, 0, 0, 0, 0)
        }
        if (ok) {
            emit Distributed(address(0), payee, amount);
        } else {
            credits[payee] += amount;
            totalCredits += amount;
            emit Credited(payee, amount);
        }
    }

    function _payToken(address token, address payee, uint256 amount) private {
        if (_tryTransfer(token, payee, amount)) {
            emit Distributed(token, payee, amount);
        } else {
            tokenCredits[token][payee] += amount;
            totalTokenCredits[token] += amount;
            emit TokenCredited(token, payee, amount);
        }
    }

    /**
     * @dev `token.transfer(to, value)` with at most {TOKEN_GAS_LIMIT} gas, never reverting. It succeeded when
     * the token returned true, or returned nothing at all (USDT) and is a contract; a revert, a false, any
     * other reply or an address without code is a failure. This is SafeERC20's trySafeTransfer but with a
     * gas bound (trySafeTransfer hands over all the gas), and it checks that a returned word is whole.
     */
    function _tryTransfer(address token, address to, uint256 value) private returns (bool ok) {
        uint256 gasLimit = TOKEN_GAS_LIMIT;
        _requireGasFor(gasLimit);
        bytes4 selector = IERC20.transfer.selector;
        assembly ("memory-safe") {
            let fmp := mload(0x40)
            mstore(0x00, selector)
            mstore(0x04, and(to, shr(96, not(0))))
            mstore(0x24, value) // overwrites the free memory pointer, restored below
            // At most one word of the reply is copied, so a huge reply costs this call nothing.
            ok := call(gasLimit, token, 0, 0x00, 0x44, 0x00, 0x20)
            if iszero(and(ok, and(gt(returndatasize(), 0x1f), eq(mload(0x00), 1)))) {
                ok := and(ok, and(iszero(returndatasize()), gt(extcodesize(token), 0)))
            }
            mstore(0x40, fmp)
        }
    }

    /// @dev Reverts unless the next call can be handed all of `gasLimit`: a call gets at most 63/64 of the
    /// gas left (EIP-150), and a payee starved by its caller would be credited though it could be paid.
    function _requireGasFor(uint256 gasLimit) private view {
        if (gasleft() < (gasLimit * 64) / 63 + CALL_OVERHEAD) revert InsufficientGas();
    }
}
