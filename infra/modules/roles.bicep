// Every permission the two identities hold, in one place. Data-plane access is by role assignment
// only: no account keys, no connection strings with secrets. Each role is scoped to the narrowest
// resource that works (a container, a secret) rather than the resource group.

@description('Principal (object) id of the Function App\'s identity.')
param appPrincipalId string

@description('Principal (object) id of API Management\'s identity.')
param gatewayPrincipalId string

@description('Storage account holding the queues and the host\'s containers.')
param storageAccountName string

@description('Blob containers the app may use: the deployment package and the Functions host\'s locks and keys.')
param blobContainerNames string[]

@description('Cosmos DB account name.')
param cosmosAccountName string

@description('Cosmos DB database the app may read and write.')
param cosmosDatabaseName string

@description('Key Vault name.')
param keyVaultName string

@description('Secrets API Management may read (its function key and, with an edge proxy, the edge secret). Each must exist.')
param gatewaySecretNames string[]

@description('Application Insights resource both identities send telemetry to.')
param appInsightsName string

@description('API Management service in which the app creates and deletes subscriptions (KEY_ISSUER=apim).')
param apimServiceName string

// Built-in Azure role definitions, by name (https://learn.microsoft.com/azure/role-based-access-control/built-in-roles).
var roleDefinitionIds = {
  storageQueueDataContributor: '974c5e8b-45b9-4653-ba55-5f855dd0fb88'
  storageBlobDataOwner: 'b7e6dc6d-f1e8-4753-8033-0f276bb0955b'
  keyVaultSecretsUser: '4633458b-17de-408a-b874-0445c86b69e6'
  monitoringMetricsPublisher: '3913510d-42f4-4e42-8a64-420c390055eb'
}

// Cosmos DB's data plane has its own role system: this is the built-in "Cosmos DB Built-in Data
// Contributor" SQL role definition, assigned with a sqlRoleAssignment, not an Azure RBAC role.
var cosmosBuiltInDataContributorId = '00000000-0000-0000-0000-000000000002'

resource storageAccount 'Microsoft.Storage/storageAccounts@2023-05-01' existing = {
  name: storageAccountName

  resource blobService 'blobServices@2023-05-01' existing = {
    name: 'default'
  }
}

resource blobContainers 'Microsoft.Storage/storageAccounts/blobServices/containers@2023-05-01' existing = [
  for containerName in blobContainerNames: {
    parent: storageAccount::blobService
    name: containerName
  }
]

resource cosmosAccount 'Microsoft.DocumentDB/databaseAccounts@2024-11-15' existing = {
  name: cosmosAccountName
}

resource keyVault 'Microsoft.KeyVault/vaults@2023-07-01' existing = {
  name: keyVaultName
}

resource gatewaySecrets 'Microsoft.KeyVault/vaults/secrets@2023-07-01' existing = [
  for secretName in gatewaySecretNames: {
    parent: keyVault
    name: secretName
  }
]

resource appInsights 'Microsoft.Insights/components@2020-02-02' existing = {
  name: appInsightsName
}

resource apimService 'Microsoft.ApiManagement/service@2024-05-01' existing = {
  name: apimServiceName
}

// The app: queue triggers and the outbox (the account holds only this app's queues).
resource appQueues 'Microsoft.Authorization/roleAssignments@2022-04-01' = {
  name: guid(storageAccount.id, appPrincipalId, roleDefinitionIds.storageQueueDataContributor)
  scope: storageAccount
  properties: {
    roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', roleDefinitionIds.storageQueueDataContributor)
    principalId: appPrincipalId
    principalType: 'ServicePrincipal'
  }
}

// The app: its deployment package (Flex Consumption reads it with this identity) and the host's containers.
resource appBlobContainers 'Microsoft.Authorization/roleAssignments@2022-04-01' = [
  for (containerName, index) in blobContainerNames: {
    name: guid(blobContainers[index].id, appPrincipalId, roleDefinitionIds.storageBlobDataOwner)
    scope: blobContainers[index]
    properties: {
      roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', roleDefinitionIds.storageBlobDataOwner)
      principalId: appPrincipalId
      principalType: 'ServicePrincipal'
    }
  }
]

// The app: read and write documents in the one database (not other databases, not account settings).
resource appCosmosData 'Microsoft.DocumentDB/databaseAccounts/sqlRoleAssignments@2024-11-15' = {
  parent: cosmosAccount
  name: guid(cosmosAccount.id, appPrincipalId, cosmosBuiltInDataContributorId)
  properties: {
    roleDefinitionId: '${cosmosAccount.id}/sqlRoleDefinitions/${cosmosBuiltInDataContributorId}'
    principalId: appPrincipalId
    scope: '${cosmosAccount.id}/dbs/${cosmosDatabaseName}'
  }
}

// The app: its Key Vault references (JWT_SECRET, DATA_ENCRYPTION_KEY, RELAYER_PRIVATE_KEY, RECEIPT_SIGNING_KEY, EDGE_SECRET, the Stripe secrets).
// Vault scope, because those secrets may be created after this deployment (az keyvault secret set).
resource appSecrets 'Microsoft.Authorization/roleAssignments@2022-04-01' = {
  name: guid(keyVault.id, appPrincipalId, roleDefinitionIds.keyVaultSecretsUser)
  scope: keyVault
  properties: {
    roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', roleDefinitionIds.keyVaultSecretsUser)
    principalId: appPrincipalId
    principalType: 'ServicePrincipal'
  }
}

// The gateway: only its own secrets, so it cannot read the relayer key or the JWT secret.
resource gatewaySecretReaders 'Microsoft.Authorization/roleAssignments@2022-04-01' = [
  for (secretName, index) in gatewaySecretNames: {
    name: guid(gatewaySecrets[index].id, gatewayPrincipalId, roleDefinitionIds.keyVaultSecretsUser)
    scope: gatewaySecrets[index]
    properties: {
      roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', roleDefinitionIds.keyVaultSecretsUser)
      principalId: gatewayPrincipalId
      principalType: 'ServicePrincipal'
    }
  }
]

// Both: telemetry into Application Insights, which accepts only Entra ID-authenticated senders.
resource telemetryPublishers 'Microsoft.Authorization/roleAssignments@2022-04-01' = [
  for principalId in [appPrincipalId, gatewayPrincipalId]: {
    name: guid(appInsights.id, principalId, roleDefinitionIds.monitoringMetricsPublisher)
    scope: appInsights
    properties: {
      roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', roleDefinitionIds.monitoringMetricsPublisher)
      principalId: principalId
      principalType: 'ServicePrincipal'
    }
  }
]

// The app issues and revokes API keys as API Management subscriptions (KEY_ISSUER=apim) through ARM.
// A custom role rather than "API Management Service Contributor": the app needs subscriptions only,
// not the power to change APIs, policies or the function key.
resource subscriptionIssuer 'Microsoft.Authorization/roleDefinitions@2022-04-01' = {
  name: guid(resourceGroup().id, apimServiceName, 'api-management-subscription-issuer')
  properties: {
    roleName: 'API Management subscription issuer (${uniqueString(resourceGroup().id, apimServiceName)})'
    description: 'Create, read, delete and read the keys of subscriptions in one API Management service.'
    type: 'CustomRole'
    permissions: [
      {
        actions: [
          'Microsoft.ApiManagement/service/read'
          'Microsoft.ApiManagement/service/products/read'
          'Microsoft.ApiManagement/service/subscriptions/read'
          'Microsoft.ApiManagement/service/subscriptions/write'
          'Microsoft.ApiManagement/service/subscriptions/delete'
          'Microsoft.ApiManagement/service/subscriptions/listSecrets/action'
        ]
        notActions: []
      }
    ]
    assignableScopes: [
      resourceGroup().id
    ]
  }
}

resource appKeyIssuer 'Microsoft.Authorization/roleAssignments@2022-04-01' = {
  name: guid(apimService.id, appPrincipalId, subscriptionIssuer.id)
  scope: apimService
  properties: {
    roleDefinitionId: subscriptionIssuer.id
    principalId: appPrincipalId
    principalType: 'ServicePrincipal'
  }
}
