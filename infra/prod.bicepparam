// Production: Base mainnet, a Standard v2 gateway behind an edge proxy, purge protection on.
// Secrets come from the environment of whoever deploys (never from this file): see infra/README.md.
using 'main.bicep'

param name = 'payments-prod'
param tags = {
  environment: 'prod'
  service: 'crypto-receipts'
}
param apimSku = 'StandardV2'
param apimPublisherEmail = 'platform@example.com'
param apimPublisherName = 'Crypto Receipts'
// The edge proxy's public host name (replace with yours); it forwards to the API Management gateway.
param publicBaseUrl = 'https://pay.example.com'
param corsAllowedOrigins = []
param brandKey = 'default'
param brandName = 'Crypto Receipts'

// Base mainnet: native USDC, USDT, Chainlink's ETH/USD (check the tokens against the issuers' lists and
// the feed against Chainlink's before a first deployment). The payment watcher calls the RPC endpoint
// every second: give CHAIN_RPC_URL a provider's endpoint; the public one is rate limited.
param chainRpcUrl = readEnvironmentVariable('CHAIN_RPC_URL', 'https://mainnet.base.org')
param chainId = 8453
param usdcAddress = '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913'
param usdtAddress = '0xfde4C96c8593536E31F229EA8f37b2ADa2699bb2'
param ethUsdFeedAddress = '0x71041dddad3595F9CEd3DcCFBe3D1F4b0a16Bb70'
// The feed updates at least every 1200 seconds; 300 more allow for an update that is late to land.
param feedHeartbeatSeconds = 1500
// The block and one more (about 4 s): past a one-block reorganisation of the sequencer's latest block.
param chainConfirmations = 2
param chainExplorerUrl = 'https://basescan.org'
param splitFactoryAddress = readEnvironmentVariable('SPLIT_FACTORY_ADDRESS')
param platformWallet = readEnvironmentVariable('PLATFORM_WALLET')
param adminWallets = readEnvironmentVariable('ADMIN_WALLETS')

param functionMaximumInstanceCount = 100
param functionInstanceMemoryMB = 2048
param storageSku = 'Standard_ZRS'
param logRetentionDays = 90
param keyVaultPurgeProtection = true
// The edge proxy (e.g. Front Door) injects x-edge-secret and appends the client address to
// X-Forwarded-For. The first run takes the secret from EDGE_SECRET (below) and writes it into the vault
// it creates; later runs may leave EDGE_SECRET unset.
param edgeProxyEnabled = true

// The gateway step (host key "apim", API Management's configuration): DEPLOY_GATEWAY=false only on
// the very first run, before the code is deployed (infra/README.md, "Deploy").
param deployGateway = bool(readEnvironmentVariable('DEPLOY_GATEWAY', 'true'))
param keylessCallsPerMinute = 120
param x402CallsPerMinute = 30
param splitDeployDailyBudget = 200

// Payments: the quote lock, expiry, slippage and the watcher's log range (infra/README.md, "Payments").
param quoteLockSeconds = 600
param receiptExpirySeconds = 86400
param paymentSlippageBps = 100
param watchBlockRange = 2000
param portalCallsPerMinute = 120
// x402: empty settles agents' payments in process with the relayer; a facilitator's base URL settles them there.
param x402FacilitatorUrl = ''
// Card payments: none until Stripe's secrets are in Key Vault (then stripe; infra/README.md "Card payments").
param onrampProvider = 'none'

param actionGroupResourceId = readEnvironmentVariable('ALERT_ACTION_GROUP_ID')
param outboxDepthThreshold = 100
param serverErrorRatePercent = 2
param relayerMinBalanceEth = '0.05'

param gatewayFunctionKey = readEnvironmentVariable('GATEWAY_FUNCTION_KEY')
param jwtSecret = readEnvironmentVariable('JWT_SECRET', '')
param dataEncryptionKey = readEnvironmentVariable('DATA_ENCRYPTION_KEY', '')
param relayerPrivateKey = readEnvironmentVariable('RELAYER_PRIVATE_KEY', '')
param receiptSigningKey = readEnvironmentVariable('RECEIPT_SIGNING_KEY', '')
param stripeSecretKey = readEnvironmentVariable('STRIPE_SECRET_KEY', '')
param stripeWebhookSecret = readEnvironmentVariable('STRIPE_WEBHOOK_SECRET', '')
param edgeSecret = readEnvironmentVariable('EDGE_SECRET', '')
