// SPDX-License-Identifier: MIT
pragma solidity ^0.8.26;

/// @notice Chainlink's price feed interface, as consumers read it.
interface AggregatorV3Interface {
    function decimals() external view returns (uint8);

    function description() external view returns (string memory);

    function version() external view returns (uint256);

    function getRoundData(uint80 roundId)
        external
        view
        returns (uint80 roundId_, int256 answer, uint256 startedAt, uint256 updatedAt, uint80 answeredInRound);

    function latestRoundData()
        external
        view
        returns (uint80 roundId, int256 answer, uint256 startedAt, uint256 updatedAt, uint80 answeredInRound);
}

/**
 * @title MockAggregatorV3
 * @notice An ETH/USD feed whose answer the deployer sets: 8 decimals, like Chainlink's USD feeds. Each
 * answer starts a new round, as an oracle update does. Like a Chainlink proxy it names its aggregator
 * (itself, unless the owner names another) and, like an OCR aggregator, the bounds its answers are
 * held to; it does not enforce them, so an answer at a bound (a market past it) can be set. For tests
 * and the local chain only.
 */
contract MockAggregatorV3 is AggregatorV3Interface {
    struct Round {
        int256 answer;
        uint256 startedAt;
        uint256 updatedAt;
    }

    uint8 public constant decimals = 8;
    string public constant description = "ETH / USD";
    uint256 public constant version = 4;
    /// @notice The aggregator's bounds, in the answer's decimals: 0.00000001 USD and 1,000,000 USD.
    int192 public constant minAnswer = 1;
    int192 public constant maxAnswer = 100_000_000_000_000;

    address public immutable owner;
    /// @notice The aggregator behind the feed, as EACAggregatorProxy.aggregator() names it.
    address public aggregator;
    uint80 public latestRound;
    mapping(uint80 roundId => Round) private _rounds;

    /// @dev Chainlink's AggregatorInterface event, so a watcher sees each new answer.
    event AnswerUpdated(int256 indexed current, uint256 indexed roundId, uint256 updatedAt);

    error NotOwner();
    error NoDataPresent();

    modifier onlyOwner() {
        if (msg.sender != owner) revert NotOwner();
        _;
    }

    constructor(int256 initialAnswer) {
        owner = msg.sender;
        aggregator = address(this);
        _newRound(initialAnswer);
    }

    /// @notice Names another aggregator: one without minAnswer/maxAnswer (or no contract) makes a feed with no bounds.
    function setAggregator(address aggregator_) external onlyOwner {
        aggregator = aggregator_;
    }

    /// @notice Starts a new round with this answer, updated now.
    function setAnswer(int256 answer) external onlyOwner {
        _newRound(answer);
    }

    /// @notice Moves the latest round's update time: an old one makes the answer stale.
    function setUpdatedAt(uint256 updatedAt) external onlyOwner {
        _rounds[latestRound].updatedAt = updatedAt;
    }

    function getRoundData(uint80 roundId) public view returns (uint80, int256, uint256, uint256, uint80) {
        if (roundId == 0 || roundId > latestRound) revert NoDataPresent();
        Round storage round = _rounds[roundId];
        return (roundId, round.answer, round.startedAt, round.updatedAt, roundId);
    }

    function latestRoundData() external view returns (uint80, int256, uint256, uint256, uint80) {
        return getRoundData(latestRound);
    }

    function _newRound(int256 answer) private {
        uint80 roundId = latestRound + 1;
        latestRound = roundId;
        _rounds[roundId] = Round(answer, block.timestamp, block.timestamp);
        emit AnswerUpdated(answer, roundId, block.timestamp);
    }
}
