// The storage account behind the Functions host (AzureWebJobsStorage) and the app's queues. Shared-key
// access is off: every client, the host included, signs in with its Entra ID identity.

@description('Base name of the deployment; the account name derives from it and the resource group id.')
param name string

@description('Azure region.')
param location string

@description('Tags applied to every resource.')
param tags object

@description('Replication SKU of the account.')
param skuName string

@description('Every queue to create: the app\'s queues and their poison queues.')
param queueNames string[]

@description('Blob container that holds the Function App\'s deployment package (Flex Consumption).')
param deploymentContainerName string

// Storage account names: 3-24 lower-case letters and digits, globally unique.
var accountName = 'st${uniqueString(resourceGroup().id, name)}'

// The Functions host keeps timer-trigger locks in azure-webjobs-hosts and its keys (the function key
// API Management uses) in azure-webjobs-secrets. They are declared so the app's blob role can be
// scoped to exactly these containers instead of the whole account.
var blobContainerNames = [
  deploymentContainerName
  'azure-webjobs-hosts'
  'azure-webjobs-secrets'
]

resource account 'Microsoft.Storage/storageAccounts@2023-05-01' = {
  name: accountName
  location: location
  tags: tags
  kind: 'StorageV2'
  sku: {
    name: skuName
  }
  properties: {
    allowSharedKeyAccess: false
    defaultToOAuthAuthentication: true
    allowBlobPublicAccess: false
    allowCrossTenantReplication: false
    minimumTlsVersion: 'TLS1_2'
    supportsHttpsTrafficOnly: true
    publicNetworkAccess: 'Enabled'
    networkAcls: {
      defaultAction: 'Allow'
      bypass: 'AzureServices'
    }
  }
}

resource queueService 'Microsoft.Storage/storageAccounts/queueServices@2023-05-01' = {
  parent: account
  name: 'default'
}

resource queues 'Microsoft.Storage/storageAccounts/queueServices/queues@2023-05-01' = [
  for queueName in queueNames: {
    parent: queueService
    name: queueName
  }
]

resource blobService 'Microsoft.Storage/storageAccounts/blobServices@2023-05-01' = {
  parent: account
  name: 'default'
  properties: {
    deleteRetentionPolicy: {
      enabled: true
      days: 7
    }
  }
}

resource containers 'Microsoft.Storage/storageAccounts/blobServices/containers@2023-05-01' = [
  for containerName in blobContainerNames: {
    parent: blobService
    name: containerName
    properties: {
      publicAccess: 'None'
    }
  }
]

@description('Storage account name (AzureWebJobsStorage__accountName).')
output accountName string = account.name

@description('Queue service endpoint, ending with a slash (AzureWebJobsStorage__queueServiceUri).')
output queueEndpoint string = account.properties.primaryEndpoints.queue

@description('Blob service endpoint, ending with a slash.')
output blobEndpoint string = account.properties.primaryEndpoints.blob

@description('The blob containers the app identity may use.')
output blobContainerNames string[] = blobContainerNames
