// Cosmos DB for NoSQL, serverless, Entra ID only. The containers come from shared/registry.ts (through
// infra/cosmos-containers.json); partition keys and unique keys cannot change after creation, so a
// change there means a new container and a data move, not a redeploy.

@description('Base name of the deployment; the account name derives from it and the resource group id.')
param name string

@description('Azure region.')
param location string

@description('Tags applied to every resource.')
param tags object

@description('Database name (COSMOS_DATABASE).')
param databaseName string

@description('Containers: name, partitionKey, optional uniqueKeys (lists of paths), compositeIndexes (lists of {path, order}) and expiring (true: per-document TTL).')
param containers array

resource account 'Microsoft.DocumentDB/databaseAccounts@2024-11-15' = {
  name: 'cosmos-${name}-${take(uniqueString(resourceGroup().id, name), 6)}'
  location: location
  tags: tags
  kind: 'GlobalDocumentDB'
  properties: {
    databaseAccountOfferType: 'Standard'
    capabilities: [
      {
        name: 'EnableServerless'
      }
    ]
    locations: [
      {
        locationName: location
        failoverPriority: 0
        isZoneRedundant: false
      }
    ]
    consistencyPolicy: {
      defaultConsistencyLevel: 'Session'
    }
    // No account keys: the app reaches the data plane with its identity and the Cosmos SQL role
    // assignment in roles.bicep; databases and containers change only through ARM (this template).
    disableLocalAuth: true
    disableKeyBasedMetadataWriteAccess: true
    minimalTlsVersion: 'Tls12'
    publicNetworkAccess: 'Enabled'
  }
}

resource database 'Microsoft.DocumentDB/databaseAccounts/sqlDatabases@2024-11-15' = {
  parent: account
  name: databaseName
  properties: {
    resource: {
      id: databaseName
    }
  }
}

resource sqlContainers 'Microsoft.DocumentDB/databaseAccounts/sqlDatabases/containers@2024-11-15' = [
  for container in containers: {
    parent: database
    name: container.name
    properties: {
      resource: {
        id: container.name
        partitionKey: {
          paths: [
            container.partitionKey
          ]
          kind: 'Hash'
          version: 2
        }
        uniqueKeyPolicy: {
          uniqueKeys: map(container.?uniqueKeys ?? [], paths => { paths: paths })
        }
        // Containers of temporary records: TTL on with no default; each document with `expiresAt` carries its own `ttl`.
        defaultTtl: (container.?expiring ?? false) ? -1 : null
        indexingPolicy: {
          indexingMode: 'consistent'
          automatic: true
          includedPaths: [
            {
              path: '/*'
            }
          ]
          excludedPaths: [
            {
              path: '/"_etag"/?'
            }
          ]
          compositeIndexes: container.?compositeIndexes ?? []
        }
      }
    }
  }
]

@description('Account name (role assignment scope).')
output accountName string = account.name

@description('Document endpoint (COSMOS_ENDPOINT).')
output endpoint string = account.properties.documentEndpoint
