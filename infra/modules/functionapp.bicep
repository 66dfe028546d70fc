// The Function App on Flex Consumption. Every HTTP function has authLevel 'function'
// (shared/http/function.ts), so a caller needs a function or host key: API Management holds the host
// key "apim" and nobody else does, which is what makes the gateway-stamped x-subscription-id
// trustworthy. That key is not written here: the Functions host accepts keys only once it serves code,
// so gateway-host-key.bicep writes it in the gateway step, after the code is deployed (infra/README.md).
// Storage, Cosmos DB, Key Vault and telemetry are reached with the user-assigned identity.
// The queue and timer functions (shared/triggers/table.ts) need nothing beyond the app: the host runs
// each timer on one instance at a time, holding a blob lease in azure-webjobs-hosts (roles.bicep lets
// the identity write there). payments-watch runs every second, so the app never idles (infra/README.md,
// "Payments").

@description('Base name of the deployment; resource names derive from it and the resource group id.')
param name string

@description('Azure region.')
param location string

@description('Tags applied to every resource.')
param tags object

@description('Resource id of the app\'s user-assigned identity.')
param identityResourceId string

@description('Client id of the app\'s user-assigned identity (AZURE_CLIENT_ID, AzureWebJobsStorage__clientId).')
param identityClientId string

@description('Storage account of the Functions host and the queues.')
param storageAccountName string

@description('Queue service endpoint of that account.')
param queueEndpoint string

@description('Blob service endpoint of that account.')
param blobEndpoint string

@description('Blob container of the deployment package.')
param deploymentContainerName string

@description('Application Insights connection string (an address; ingestion needs the identity\'s token).')
param appInsightsConnectionString string

@description('Log Analytics workspace for the app\'s platform logs.')
param logAnalyticsWorkspaceId string

@description('Key Vault URI, ending with a slash.')
param keyVaultUri string

@description('Key Vault secret names by purpose (keyvault.bicep).')
param secretNames object

@description('Whether an edge proxy is configured; EDGE_SECRET is referenced only then, so the app never reads a secret that does not exist.')
param edgeProxyEnabled bool

@description('Cosmos DB document endpoint.')
param cosmosEndpoint string

@description('Cosmos DB database name.')
param cosmosDatabaseName string

@description('BASE_URL.')
param baseUrl string

@description('BRAND_KEY.')
param brandKey string

@description('BRAND_NAME.')
param brandName string

@description('CHAIN_RPC_URL.')
param chainRpcUrl string

@description('CHAIN_NETWORK: base or base-sepolia; the app fills in the chain id, the tokens, the feed, the confirmations and the explorer.')
param chainNetwork string

@description('USDC_ADDRESS (empty: the network\'s).')
param usdcAddress string

@description('USDT_ADDRESS (empty: the network\'s, none on Base).')
param usdtAddress string

@description('ETH_USD_FEED_ADDRESS (empty: the network\'s).')
param ethUsdFeedAddress string

@description('FEED_HEARTBEAT_SECONDS: a feed answer older than this is stale (0: the network\'s).')
param feedHeartbeatSeconds int

@description('CHAIN_CONFIRMATIONS: blocks a payment or refund needs, its own included (0: the network\'s).')
param chainConfirmations int

@description('CHAIN_EXPLORER_URL (empty: the network\'s).')
param chainExplorerUrl string

@description('RECEIPT_SIGNERS_RETIRED: receipt-signing keys rotated out (0xaddress@time, comma-separated).')
param receiptSignersRetired string

@description('QUOTE_LOCK_SECONDS.')
param quoteLockSeconds int

@description('RECEIPT_EXPIRY_SECONDS.')
param receiptExpirySeconds int

@description('PAYMENT_SLIPPAGE_BPS.')
param paymentSlippageBps int

@description('WATCH_BLOCK_RANGE.')
param watchBlockRange int

@description('PORTAL_RATE_LIMIT_PER_MINUTE: calls a minute about one receipt on the buyer\'s routes.')
param portalCallsPerMinute int

@description('X402_FACILITATOR_URL: a remote x402 facilitator; empty: the relayer settles x402 payments in process.')
param x402FacilitatorUrl string

@description('ONRAMP_PROVIDER: stripe or none (card payments).')
param onrampProvider string

@description('SPLIT_FACTORY_ADDRESS.')
param splitFactoryAddress string

@description('DEPOSIT_FACTORY_ADDRESS (may be empty).')
param depositFactoryAddress string

@description('PLATFORM_WALLET.')
param platformWallet string

@description('ADMIN_WALLETS, comma-separated.')
param adminWallets string

@description('API Management service the app issues keys in (APIM_SERVICE_NAME).')
param apimServiceName string

@description('Most instances the app scales to.')
param maximumInstanceCount int

@description('Memory per instance, in MB.')
param instanceMemoryMB int

@description('KEYLESS_RATE_LIMIT_PER_MINUTE: calls a minute one client address may make to routes without a key. API Management enforces it in Azure (the same value as its keyless limit); the app\'s local host reads it.')
param keylessCallsPerMinute int

@description('X402_RATE_LIMIT_PER_MINUTE: calls a minute one client address may make to the x402 routes. API Management enforces it in Azure (the same value as its x402 limit); the app\'s local host reads it.')
param x402CallsPerMinute int

@description('SPLIT_DEPLOY_DAILY_BUDGET: split deployments the relayer pays for, across all merchants, per UTC day.')
param splitDeployDailyBudget int

@description('SETTLEMENT_DAILY_BUDGET: x402 settlements the service pays gas for, across all payers, per UTC day.')
param settlementDailyBudget int

@description('DISTRIBUTION_DAILY_BUDGET: distributions the relayer sends, across all splits, per UTC day.')
param distributionDailyBudget int

@description('SWEEP_DAILY_BUDGET: deposit sweeps (sweepMany transactions of up to 50 deposit addresses) the relayer sends, across all shops, per UTC day.')
param sweepDailyBudget int

@description('X402_MIN_ORDER_USDC: the smallest x402 order, USDC atomic units.')
param x402MinOrderUsdc int

@description('DISTRIBUTE_MIN_USDC: USDC (atomic units) a split must hold before the relayer distributes it.')
param distributeMinUsdc int

@description('DISTRIBUTE_MIN_USDT: USDT (atomic units) a split must hold before the relayer distributes it.')
param distributeMinUsdt int

@description('DISTRIBUTE_MIN_ETH_WEI: ETH (wei) a split must hold before the relayer distributes it.')
param distributeMinEthWei int

var suffix = take(uniqueString(resourceGroup().id, name), 6)

// An unresolved reference is handed to the app as the literal "@Microsoft.KeyVault(...)" text, so a
// reference is only made to a secret that this deployment or the operator creates (infra/README.md).
var keyVaultReference = {
  jwtSecret: '@Microsoft.KeyVault(SecretUri=${keyVaultUri}secrets/${secretNames.jwtSecret}/)'
  dataEncryptionKey: '@Microsoft.KeyVault(SecretUri=${keyVaultUri}secrets/${secretNames.dataEncryptionKey}/)'
  relayerPrivateKey: '@Microsoft.KeyVault(SecretUri=${keyVaultUri}secrets/${secretNames.relayerPrivateKey}/)'
  receiptSigningKey: '@Microsoft.KeyVault(SecretUri=${keyVaultUri}secrets/${secretNames.receiptSigningKey}/)'
  stripeSecretKey: '@Microsoft.KeyVault(SecretUri=${keyVaultUri}secrets/${secretNames.stripeSecretKey}/)'
  stripeWebhookSecret: '@Microsoft.KeyVault(SecretUri=${keyVaultUri}secrets/${secretNames.stripeWebhookSecret}/)'
  edgeSecret: '@Microsoft.KeyVault(SecretUri=${keyVaultUri}secrets/${secretNames.edgeSecret}/)'
}

// Flex Consumption rejects FUNCTIONS_WORKER_RUNTIME, FUNCTIONS_EXTENSION_VERSION and
// WEBSITE_RUN_FROM_PACKAGE: the runtime and the package location are in functionAppConfig below.
var appSettings = concat(
  [
    // Identity-based host storage: no AccountKey anywhere.
    { name: 'AzureWebJobsStorage__accountName', value: storageAccountName }
    { name: 'AzureWebJobsStorage__credential', value: 'managedidentity' }
    { name: 'AzureWebJobsStorage__clientId', value: identityClientId }
    { name: 'AzureWebJobsStorage__queueServiceUri', value: queueEndpoint }
    // DefaultAzureCredential in the app (Cosmos DB, queues, API Management) picks this identity.
    { name: 'AZURE_CLIENT_ID', value: identityClientId }
    { name: 'APPLICATIONINSIGHTS_CONNECTION_STRING', value: appInsightsConnectionString }
    { name: 'APPLICATIONINSIGHTS_AUTHENTICATION_STRING', value: 'ClientId=${identityClientId};Authorization=AAD' }
    { name: 'APP_ENV', value: 'production' }
    { name: 'BASE_URL', value: baseUrl }
    { name: 'BRAND_KEY', value: brandKey }
    { name: 'BRAND_NAME', value: brandName }
    // No COSMOS_KEY: without one the app signs in with its identity (Cosmos DB local auth is off).
    { name: 'COSMOS_ENDPOINT', value: cosmosEndpoint }
    { name: 'COSMOS_DATABASE', value: cosmosDatabaseName }
    { name: 'CHAIN_RPC_URL', value: chainRpcUrl }
    // The network fills in the rest of the chain; an empty value counts as unset, so it keeps the network's.
    { name: 'CHAIN_NETWORK', value: chainNetwork }
    { name: 'USDC_ADDRESS', value: usdcAddress }
    { name: 'USDT_ADDRESS', value: usdtAddress }
    // Payments: the price feed, what counts as paid, and the watcher.
    { name: 'ETH_USD_FEED_ADDRESS', value: ethUsdFeedAddress }
    { name: 'FEED_HEARTBEAT_SECONDS', value: feedHeartbeatSeconds == 0 ? '' : string(feedHeartbeatSeconds) }
    { name: 'CHAIN_CONFIRMATIONS', value: chainConfirmations == 0 ? '' : string(chainConfirmations) }
    { name: 'CHAIN_EXPLORER_URL', value: chainExplorerUrl }
    { name: 'QUOTE_LOCK_SECONDS', value: string(quoteLockSeconds) }
    { name: 'RECEIPT_EXPIRY_SECONDS', value: string(receiptExpirySeconds) }
    { name: 'PAYMENT_SLIPPAGE_BPS', value: string(paymentSlippageBps) }
    { name: 'WATCH_BLOCK_RANGE', value: string(watchBlockRange) }
    // x402: a remote facilitator settles agents' payments; empty (unset for the app) means the relayer does, in process.
    { name: 'X402_FACILITATOR_URL', value: x402FacilitatorUrl }
    // Card payments: the on-ramp provider; Stripe's secrets are referenced only when it is the one.
    { name: 'ONRAMP_PROVIDER', value: onrampProvider }
    { name: 'SPLIT_FACTORY_ADDRESS', value: splitFactoryAddress }
    { name: 'DEPOSIT_FACTORY_ADDRESS', value: depositFactoryAddress }
    { name: 'PLATFORM_WALLET', value: platformWallet }
    { name: 'ADMIN_WALLETS', value: adminWallets }
    // API keys are API Management subscriptions, created through ARM with the app's identity.
    { name: 'KEY_ISSUER', value: 'apim' }
    { name: 'AZURE_SUBSCRIPTION_ID', value: subscription().subscriptionId }
    { name: 'APIM_RESOURCE_GROUP', value: resourceGroup().name }
    { name: 'APIM_SERVICE_NAME', value: apimServiceName }
    // Abuse limits: the keyless and x402 limits are API Management's (the same numbers), the daily
    // budget and the per-receipt portal limit the app's.
    { name: 'KEYLESS_RATE_LIMIT_PER_MINUTE', value: string(keylessCallsPerMinute) }
    { name: 'X402_RATE_LIMIT_PER_MINUTE', value: string(x402CallsPerMinute) }
    { name: 'SPLIT_DEPLOY_DAILY_BUDGET', value: string(splitDeployDailyBudget) }
    // The relayer's other gas: settlements, distributions and deposit sweeps a day, the smallest x402
    // order, and what a split must hold before it is distributed.
    { name: 'SETTLEMENT_DAILY_BUDGET', value: string(settlementDailyBudget) }
    { name: 'DISTRIBUTION_DAILY_BUDGET', value: string(distributionDailyBudget) }
    { name: 'SWEEP_DAILY_BUDGET', value: string(sweepDailyBudget) }
    { name: 'X402_MIN_ORDER_USDC', value: string(x402MinOrderUsdc) }
    { name: 'DISTRIBUTE_MIN_USDC', value: string(distributeMinUsdc) }
    { name: 'DISTRIBUTE_MIN_USDT', value: string(distributeMinUsdt) }
    { name: 'DISTRIBUTE_MIN_ETH_WEI', value: string(distributeMinEthWei) }
    { name: 'PORTAL_RATE_LIMIT_PER_MINUTE', value: string(portalCallsPerMinute) }
    { name: 'JWT_SECRET', value: keyVaultReference.jwtSecret }
    { name: 'DATA_ENCRYPTION_KEY', value: keyVaultReference.dataEncryptionKey }
    { name: 'RELAYER_PRIVATE_KEY', value: keyVaultReference.relayerPrivateKey }
    { name: 'RECEIPT_SIGNING_KEY', value: keyVaultReference.receiptSigningKey }
    { name: 'RECEIPT_SIGNERS_RETIRED', value: receiptSignersRetired }
  ],
  edgeProxyEnabled ? [{ name: 'EDGE_SECRET', value: keyVaultReference.edgeSecret }] : [],
  onrampProvider == 'stripe'
    ? [
        { name: 'STRIPE_SECRET_KEY', value: keyVaultReference.stripeSecretKey }
        { name: 'STRIPE_WEBHOOK_SECRET', value: keyVaultReference.stripeWebhookSecret }
      ]
    : []
)

resource plan 'Microsoft.Web/serverfarms@2024-04-01' = {
  name: 'plan-${name}-${suffix}'
  location: location
  tags: tags
  kind: 'functionapp'
  sku: {
    tier: 'FlexConsumption'
    name: 'FC1'
  }
  properties: {
    reserved: true
  }
}

resource site 'Microsoft.Web/sites@2024-04-01' = {
  name: 'func-${name}-${suffix}'
  location: location
  tags: tags
  kind: 'functionapp,linux'
  identity: {
    type: 'UserAssigned'
    userAssignedIdentities: {
      '${identityResourceId}': {}
    }
  }
  properties: {
    serverFarmId: plan.id
    httpsOnly: true
    // Key Vault references resolve with this identity (the default would be a system identity, which there is none of).
    keyVaultReferenceIdentity: identityResourceId
    siteConfig: {
      minTlsVersion: '1.2'
      ftpsState: 'Disabled'
      http20Enabled: true
      appSettings: appSettings
    }
    functionAppConfig: {
      deployment: {
        storage: {
          type: 'blobContainer'
          value: '${blobEndpoint}${deploymentContainerName}'
          authentication: {
            type: 'UserAssignedIdentity'
            userAssignedIdentityResourceId: identityResourceId
          }
        }
      }
      scaleAndConcurrency: {
        maximumInstanceCount: maximumInstanceCount
        instanceMemoryMB: instanceMemoryMB
      }
      // Node 22 in Azure. The code targets Node 20 (package.json engines, the esbuild bundle's
      // target) and runs unchanged on 22; the local stack and CI run it on 20.
      runtime: {
        name: 'node'
        version: '22'
      }
    }
  }
}

// Publishing goes through ARM with Entra ID; the basic-auth (SCM/FTP) publishing credentials stay off.
resource scmBasicAuth 'Microsoft.Web/sites/basicPublishingCredentialsPolicies@2024-04-01' = {
  parent: site
  name: 'scm'
  properties: {
    allow: false
  }
}

resource ftpBasicAuth 'Microsoft.Web/sites/basicPublishingCredentialsPolicies@2024-04-01' = {
  parent: site
  name: 'ftp'
  properties: {
    allow: false
  }
}

resource diagnostics 'Microsoft.Insights/diagnosticSettings@2021-05-01-preview' = {
  name: 'to-log-analytics'
  scope: site
  properties: {
    workspaceId: logAnalyticsWorkspaceId
    logs: [
      {
        categoryGroup: 'allLogs'
        enabled: true
      }
    ]
    metrics: [
      {
        category: 'AllMetrics'
        enabled: true
      }
    ]
  }
}

@description('Function App name.')
output name string = site.name

@description('Function App host name (the gateway\'s backend).')
output defaultHostName string = site.properties.defaultHostName
