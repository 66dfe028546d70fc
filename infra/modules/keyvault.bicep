// Key Vault in RBAC mode for the app's secrets and the gateway's function key. Secret values never
// appear in the templates: each is a secure parameter, and an empty one leaves the secret as it is, so
// a secret set with `az keyvault secret set` survives later deployments.

@description('Base name of the deployment; the vault name derives from it and the resource group id.')
param name string

@description('Azure region.')
param location string

@description('Tags applied to every resource.')
param tags object

@description('Turn on purge protection (irreversible).')
param purgeProtection bool

@description('Functions host key for API Management; always written (the gateway cannot work without it).')
@secure()
param gatewayFunctionKey string

@description('JWT_SECRET; empty leaves the secret unchanged.')
@secure()
param jwtSecret string

@description('DATA_ENCRYPTION_KEY; empty leaves the secret unchanged.')
@secure()
param dataEncryptionKey string

@description('RELAYER_PRIVATE_KEY; empty leaves the secret unchanged.')
@secure()
param relayerPrivateKey string

@description('RECEIPT_SIGNING_KEY; empty leaves the secret unchanged.')
@secure()
param receiptSigningKey string

@description('STRIPE_SECRET_KEY; empty leaves the secret unchanged.')
@secure()
param stripeSecretKey string

@description('STRIPE_WEBHOOK_SECRET; empty leaves the secret unchanged.')
@secure()
param stripeWebhookSecret string

@description('EDGE_SECRET; empty leaves the secret unchanged.')
@secure()
param edgeSecret string

// The names the app settings, the gateway's named values and infra/README.md use.
var secretNames = {
  jwtSecret: 'jwt-secret'
  dataEncryptionKey: 'data-encryption-key'
  relayerPrivateKey: 'relayer-private-key'
  receiptSigningKey: 'receipt-signing-key'
  stripeSecretKey: 'stripe-secret-key'
  stripeWebhookSecret: 'stripe-webhook-secret'
  edgeSecret: 'edge-secret'
  gatewayFunctionKey: 'apim-function-key'
}

resource vault 'Microsoft.KeyVault/vaults@2023-07-01' = {
  name: 'kv-${uniqueString(resourceGroup().id, name)}'
  location: location
  tags: tags
  properties: {
    tenantId: subscription().tenantId
    sku: {
      family: 'A'
      name: 'standard'
    }
    enableRbacAuthorization: true
    enableSoftDelete: true
    softDeleteRetentionInDays: 90
    // The property only accepts true; leaving it out is how "off" is expressed.
    enablePurgeProtection: purgeProtection ? true : null
    publicNetworkAccess: 'Enabled'
    networkAcls: {
      defaultAction: 'Allow'
      bypass: 'AzureServices'
    }
  }
}

resource gatewayFunctionKeySecret 'Microsoft.KeyVault/vaults/secrets@2023-07-01' = {
  parent: vault
  name: secretNames.gatewayFunctionKey
  properties: {
    value: gatewayFunctionKey
    contentType: 'Functions host key "apim"; API Management sends it as x-functions-key'
  }
}

resource jwtSecretValue 'Microsoft.KeyVault/vaults/secrets@2023-07-01' = if (!empty(jwtSecret)) {
  parent: vault
  name: secretNames.jwtSecret
  properties: {
    value: jwtSecret
    contentType: 'JWT_SECRET: HS256 key of admin sessions'
  }
}

resource dataEncryptionKeyValue 'Microsoft.KeyVault/vaults/secrets@2023-07-01' = if (!empty(dataEncryptionKey)) {
  parent: vault
  name: secretNames.dataEncryptionKey
  properties: {
    value: dataEncryptionKey
    contentType: 'DATA_ENCRYPTION_KEY: AES-256-GCM key (base64) of stored webhook signing keys'
  }
}

resource relayerPrivateKeyValue 'Microsoft.KeyVault/vaults/secrets@2023-07-01' = if (!empty(relayerPrivateKey)) {
  parent: vault
  name: secretNames.relayerPrivateKey
  properties: {
    value: relayerPrivateKey
    contentType: 'RELAYER_PRIVATE_KEY: EVM key that pays gas'
  }
}

resource receiptSigningKeyValue 'Microsoft.KeyVault/vaults/secrets@2023-07-01' = if (!empty(receiptSigningKey)) {
  parent: vault
  name: secretNames.receiptSigningKey
  properties: {
    value: receiptSigningKey
    contentType: 'RECEIPT_SIGNING_KEY: EVM key that signs receipt proofs (EIP-712)'
  }
}

resource stripeSecretKeyValue 'Microsoft.KeyVault/vaults/secrets@2023-07-01' = if (!empty(stripeSecretKey)) {
  parent: vault
  name: secretNames.stripeSecretKey
  properties: {
    value: stripeSecretKey
    contentType: 'STRIPE_SECRET_KEY: the card on-ramp\'s API key'
  }
}

resource stripeWebhookSecretValue 'Microsoft.KeyVault/vaults/secrets@2023-07-01' = if (!empty(stripeWebhookSecret)) {
  parent: vault
  name: secretNames.stripeWebhookSecret
  properties: {
    value: stripeWebhookSecret
    contentType: 'STRIPE_WEBHOOK_SECRET: verifies the on-ramp\'s webhooks'
  }
}

resource edgeSecretValue 'Microsoft.KeyVault/vaults/secrets@2023-07-01' = if (!empty(edgeSecret)) {
  parent: vault
  name: secretNames.edgeSecret
  properties: {
    value: edgeSecret
    contentType: 'EDGE_SECRET: x-edge-secret the edge proxy injects'
  }
}

@description('Vault name.')
output vaultName string = vault.name

@description('Vault URI, ending with a slash.')
output vaultUri string = vault.properties.vaultUri

@description('Secret names by purpose.')
output secretNames object = secretNames
