// Development: Base Sepolia, the smallest API Management v2 tier, no purge protection so the
// environment can be torn down and recreated under the same names.
// Secrets come from the environment of whoever deploys (never from this file): see infra/README.md.
using 'main.bicep'

param name = 'payments-dev'
param tags = {
  environment: 'dev'
  service: 'crypto-receipts'
}
param apimSku = 'BasicV2'
param apimPublisherEmail = 'platform-dev@example.com'
param apimPublisherName = 'Crypto Receipts (dev)'
param brandKey = 'default'
param brandName = 'Crypto Receipts (dev)'

// Base Sepolia: the app fills in the chain id, Circle's test USDC, Chainlink's ETH/USD there, 2
// confirmations and Sepolia BaseScan (shared/domain/chain-networks.ts); no USDT. The split factory is
// the one deployed for dev.
param chainNetwork = 'base-sepolia'
param chainRpcUrl = 'https://sepolia.base.org'
// No fallbacks: a wrong platform wallet would receive real fees.
param splitFactoryAddress = readEnvironmentVariable('SPLIT_FACTORY_ADDRESS')
param platformWallet = readEnvironmentVariable('PLATFORM_WALLET')
param adminWallets = readEnvironmentVariable('ADMIN_WALLETS')

param functionMaximumInstanceCount = 10
param functionInstanceMemoryMB = 2048
param logRetentionDays = 30
param keyVaultPurgeProtection = false
param edgeProxyEnabled = false

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

param actionGroupResourceId = readEnvironmentVariable('ALERT_ACTION_GROUP_ID', '')
param outboxDepthThreshold = 20
param relayerMinBalanceEth = '0.01'

// Secure values: from the environment, empty when unset (an empty one leaves the Key Vault secret as it is).
param gatewayFunctionKey = readEnvironmentVariable('GATEWAY_FUNCTION_KEY')
param jwtSecret = readEnvironmentVariable('JWT_SECRET', '')
param dataEncryptionKey = readEnvironmentVariable('DATA_ENCRYPTION_KEY', '')
param relayerPrivateKey = readEnvironmentVariable('RELAYER_PRIVATE_KEY', '')
param receiptSigningKey = readEnvironmentVariable('RECEIPT_SIGNING_KEY', '')
param stripeSecretKey = readEnvironmentVariable('STRIPE_SECRET_KEY', '')
param stripeWebhookSecret = readEnvironmentVariable('STRIPE_WEBHOOK_SECRET', '')
param edgeSecret = readEnvironmentVariable('EDGE_SECRET', '')
