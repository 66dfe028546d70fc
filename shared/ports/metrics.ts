/** Custom metrics the alerts read (Application Insights `customMetrics` in Azure). */
export interface MetricsSink {
  record(name: string, value: number, dimensions?: Record<string, string>): void;
  flush(): Promise<void>;
}
