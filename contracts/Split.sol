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

    address[] private _payees;
    uint16[] private _bps;

    /// @notice Block of initialization: lets off-chain code find the creation log without scanning the chain.
    uint64 public createdAtBlock;

    /// @notice ETH owed to payees whose transfer failed; they pull it with {withdraw}.
    mapping(address payee => uint256 amount) public credits;
    /// @notice Sum of {credits}: ETH held here that belongs to no later distribution.
    uint256 public totalCredits;

    event PaymentReceived(address indexed from, uint256 amount);
    /// @dev token is the zero address for ETH.
    event Distributed(address indexed token, address indexed payee, uint256 amount);
    event Credited(address indexed payee, uint256 amount);
    event Withdrawn(address indexed payee, address to, uint256 amount);

    error NoPayees();
    error TooManyPayees(uint256 count);
    error LengthMismatch(uint256 payees, uint256 bps);
    error ZeroAddressPayee(uint256 index);
    error DuplicatePayee(address payee);
    error InvalidBpsTotal(uint256 total);
    error NothingToWithdraw();
    error WithdrawFailed();

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

    /// @notice What {distribute} would hand out now: credited ETH is not part of it.
    function distributable(address token) public view returns (uint256) {
        if (token == address(0)) return address(this).balance - totalCredits;
        return IERC20(token).balanceOf(address(this));
    }

    /**
     * @notice Pays every payee its share of the whole balance of `token` (the zero address: ETH).
     * Anyone may call it; the money can only go to the payees.
     * An ETH payee that cannot receive is credited instead, so it does not block the others.
     * An ERC-20 transfer that fails reverts the whole distribution (the token decides, not the payee).
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
            else _payToken(IERC20(token), _payees[i], shares[i]);
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

    function _payEth(address payee, uint256 amount) private {
        bool ok;
        uint256 gasLimit = PAYEE_GAS_LIMIT;
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

    function _payToken(IERC20 token, address payee, uint256 amount) private {
        token.safeTransfer(payee, amount);
        emit Distributed(address(token), payee, amount);
    }
}
