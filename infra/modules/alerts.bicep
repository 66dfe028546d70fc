// Alerts on what the platform cannot see by itself. Azure Monitor's queue metrics are per storage
// account (QueueMessageCount has no queue dimension), so the queue alerts read custom metrics the app
// emits to Application Insights (functions/metrics-report.ts):
//   queue.depth          value = approximate message count, dimension  queue = <queue name>
//                        (every queue of queueNames in main.bicep, poison queues included)
//   relayer.balance.eth  value = the relayer wallet's native balance in ETH
// every minute. A metric that stops arriving does not fire them. See infra/README.md, "Alerts".

@description('Base name of the deployment; alert names derive from it.')
param name string

@description('Azure region of the log alert rules.')
param location string

@description('Tags applied to every resource.')
param tags object

@description('Application Insights resource the rules query.')
param appInsightsId string

@description('Action group to notify; empty: none.')
param actionGroupResourceId string

@description('Poison queues: any message in one of them alerts.')
param poisonQueueNames string[]

@description('outbox depth that alerts.')
param outboxDepthThreshold int

@description('Percentage of 5xx answers that alerts.')
param serverErrorRatePercent int

@description('Relayer balance (ETH, decimal string) below which to alert.')
param relayerMinBalanceEth string

var actions = empty(actionGroupResourceId)
  ? {}
  : {
      actionGroups: [
        actionGroupResourceId
      ]
    }

var queueDepth = 'customMetrics | where name == "queue.depth" | extend queue = tostring(customDimensions["queue"])'

var logAlerts = [
  {
    key: 'poison-queues'
    displayName: 'Messages in a poison queue'
    description: 'A queue-triggered function failed a message 5 times (host.json maxDequeueCount); it sits in a -poison queue until someone looks at it.'
    severity: 1
    query: '${queueDepth} | where queue in (${join(map(poisonQueueNames, queue => '"${queue}"'), ', ')}) | summarize depth = max(value) by queue'
    measure: 'depth'
    dimension: 'queue'
    operator: 'GreaterThan'
    threshold: 0
    window: 'PT15M'
  }
  {
    key: 'outbox-depth'
    displayName: 'outbox queue is backing up'
    description: 'Writes accepted while Cosmos DB was unreachable are not being applied: the store is still down, or outbox-apply is failing.'
    severity: 2
    query: '${queueDepth} | where queue == "outbox" | summarize depth = min(value) by queue'
    measure: 'depth'
    dimension: 'queue'
    operator: 'GreaterThan'
    threshold: outboxDepthThreshold
    window: 'PT15M'
  }
  {
    key: 'outbox-rejected'
    displayName: 'Writes rejected after an outage'
    description: 'A write accepted in degraded mode could not be applied (e.g. its receipt id was taken); outbox-rejected holds it with the reason for an operator.'
    severity: 2
    query: '${queueDepth} | where queue == "outbox-rejected" | summarize depth = max(value) by queue'
    measure: 'depth'
    dimension: 'queue'
    operator: 'GreaterThan'
    threshold: 0
    window: 'PT15M'
  }
  {
    key: 'server-errors'
    displayName: '5xx rate'
    description: 'More than the threshold percentage of requests answered 5xx (gateway and Function App requests), with at least 20 requests in the window.'
    severity: 1
    query: 'requests | summarize total = count(), failed = countif(toint(resultCode) >= 500) | where total >= 20 | extend rate = 100.0 * failed / total'
    measure: 'rate'
    dimension: ''
    operator: 'GreaterThan'
    threshold: serverErrorRatePercent
    window: 'PT15M'
  }
]

resource logAlertRules 'Microsoft.Insights/scheduledQueryRules@2023-12-01' = [
  for alert in logAlerts: {
    name: '${name}-${alert.key}'
    location: location
    tags: tags
    kind: 'LogAlert'
    properties: {
      displayName: '${name}: ${alert.displayName}'
      description: alert.description
      severity: alert.severity
      enabled: true
      scopes: [
        appInsightsId
      ]
      evaluationFrequency: 'PT5M'
      windowSize: alert.window
      criteria: {
        allOf: [
          {
            query: alert.query
            timeAggregation: 'Maximum'
            metricMeasureColumn: alert.measure
            dimensions: empty(alert.dimension)
              ? []
              : [
                  {
                    name: alert.dimension
                    operator: 'Include'
                    values: [
                      '*'
                    ]
                  }
                ]
            operator: alert.operator
            threshold: alert.threshold
            failingPeriods: {
              numberOfEvaluationPeriods: 1
              minFailingPeriodsToAlert: 1
            }
          }
        ]
      }
      autoMitigate: true
      actions: actions
    }
  }
]

// A metric alert: no dimension is needed, and metric alerts evaluate every minute.
resource relayerBalance 'Microsoft.Insights/metricAlerts@2018-03-01' = {
  name: '${name}-relayer-balance'
  location: 'global'
  tags: tags
  properties: {
    description: 'The relayer wallet pays gas for split deployments and x402 settlement; top it up before it runs dry.'
    severity: 1
    enabled: true
    scopes: [
      appInsightsId
    ]
    evaluationFrequency: 'PT5M'
    windowSize: 'PT15M'
    criteria: {
      'odata.type': 'Microsoft.Azure.Monitor.SingleResourceMultipleMetricCriteria'
      allOf: [
        {
          criterionType: 'StaticThresholdCriterion'
          name: 'relayer-balance-low'
          metricNamespace: 'azure.applicationinsights'
          metricName: 'relayer.balance.eth'
          operator: 'LessThan'
          // Bicep has no decimal parameters; json() turns "0.05" into the number 0.05.
          threshold: json(relayerMinBalanceEth)
          timeAggregation: 'Minimum'
          // The metric exists only once the app has emitted it; validating it would fail the first deployment.
          skipMetricValidation: true
        }
      ]
    }
    autoMitigate: true
    actions: empty(actionGroupResourceId)
      ? []
      : [
          {
            actionGroupId: actionGroupResourceId
          }
        ]
  }
}
