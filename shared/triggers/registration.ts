import type { StorageQueueFunctionOptions, TimerFunctionOptions } from '@azure/functions';
import type { z } from 'zod';
import type { AppDeps } from '../app/deps';
import { describeZodError } from '../domain/errors';
import { getDeps } from '../composition';
import type { QueueTriggerSpec, TimerTriggerSpec } from './table';

/** Queue and timer functions by name, for the local host (the Functions host uses app.storageQueue / app.timer). */
export interface QueueFunction {
  queueName: string;
  run(message: unknown, dequeueCount: number): Promise<void>;
}
export interface TimerFunction {
  schedule: string;
  run(): Promise<void>;
}
export const queueFunctions = new Map<string, QueueFunction>();
export const timerFunctions = new Map<string, TimerFunction>();

/** The storage connection setting the Functions host reads (`AzureWebJobsStorage`, identity-based in Azure). */
const CONNECTION = 'AzureWebJobsStorage';

/**
 * A queue-triggered function: validates the message (a malformed one throws, so after
 * maxDequeueCount tries it lands in the poison queue) and runs the use case. A throw means "retry".
 */
export const queueFunction = <S extends z.ZodType>(
  spec: QueueTriggerSpec<S>,
  use: (deps: AppDeps, message: z.output<S>, dequeueCount: number) => Promise<void>,
): StorageQueueFunctionOptions => {
  const { name, queue: queueName, message: schema } = spec;
  const run = async (message: unknown, dequeueCount: number) => {
    const parsed = schema.safeParse(typeof message === 'string' ? JSON.parse(message) : message);
    if (!parsed.success) throw new Error(`${name}: malformed message (${describeZodError(parsed.error).message})`);
    await use(getDeps(), parsed.data, dequeueCount);
  };
  queueFunctions.set(name, { queueName, run });
  return {
    queueName,
    connection: CONNECTION,
    handler: (message, context) => run(message, Number(context.triggerMetadata?.dequeueCount ?? 1)),
  };
};

export const timerFunction = (spec: TimerTriggerSpec, use: (deps: AppDeps) => Promise<unknown>): TimerFunctionOptions => {
  const { name, schedule } = spec;
  const run = async () => {
    await use(getDeps());
  };
  timerFunctions.set(name, { schedule, run });
  return { schedule, handler: () => run() };
};
