import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { queueSettings, scheduleIntervalMs, startTriggers, timeSpanMs } from '../../scripts/local/triggers';
import { startQueueServer, type QueueServer } from '../../scripts/local/servers';
import { connectQueues, ensureQueues } from '../../shared/adapters/storage-queue/client';
import { encodeQueueMessage } from '../../shared/adapters/storage-queue/event-queue';
import { memoryDeps, setDeps } from '../../shared/composition';
import '../../scripts/local/functions';

let server: QueueServer;
beforeAll(async () => {
  server = await startQueueServer();
});
afterAll(() => server.close());

describe('the local host’s triggers', () => {
  it('reads host.json: batch size, dequeue limit, retry visibility and a poll of at most 500 ms', () => {
    expect(queueSettings).toEqual({ batchSize: 16, maxDequeueCount: 5, visibilityTimeoutMs: 5_000, pollMs: 500 });
    expect(timeSpanMs('00:00:00.500')).toBe(500);
    expect(scheduleIntervalMs('*/5 * * * * *')).toBe(5_000);
    expect(() => scheduleIntervalMs('0 0 * * * *')).toThrow(/\*\/N/);
  });

  it('moves a message that keeps failing to <queue>-poison after maxDequeueCount tries, and deletes handled ones', async () => {
    setDeps(memoryDeps());
    const queues = connectQueues(server.connectionString);
    await ensureQueues(queues);
    const lines: string[] = [];
    const triggers = startTriggers(queues, (line) => lines.push(line), { ...queueSettings, visibilityTimeoutMs: 0, pollMs: 50 });
    try {
      await queues.queue('webhooks').sendMessage(encodeQueueMessage({ not: 'a webhook message' }));
      const poison = queues.queue('webhooks-poison');
      let peeked: string[] = [];
      for (let n = 0; n < 100 && peeked.length === 0; n++) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        peeked = (await poison.peekMessages({ numberOfMessages: 5 })).peekedMessageItems.map((item) => Buffer.from(item.messageText, 'base64').toString('utf8'));
      }
      expect(peeked).toEqual([JSON.stringify({ not: 'a webhook message' })]);
      expect(lines.filter((line) => line.includes('malformed message'))).toHaveLength(5);
      expect((await queues.queue('webhooks').peekMessages()).peekedMessageItems).toEqual([]);
    } finally {
      await triggers.stop();
    }
  }, 20_000);
});

describe('the local queue trigger’s polling', () => {
  it('backs off as the Functions host does: at once after a full batch, 100 ms after some, 200 ms then doubling to the maximum when idle', async () => {
    const { nextPollDelayMs } = await import('../../scripts/local/triggers');
    expect(nextPollDelayMs(undefined, 16, 16, 500)).toBe(0);
    expect(nextPollDelayMs(400, 3, 16, 500)).toBe(100);
    expect(nextPollDelayMs(100, 0, 16, 500)).toBe(200);
    expect(nextPollDelayMs(200, 0, 16, 500)).toBe(400);
    expect(nextPollDelayMs(400, 0, 16, 500)).toBe(500);
    expect(nextPollDelayMs(500, 0, 16, 500)).toBe(500);
    expect(nextPollDelayMs(undefined, 0, 16, 50)).toBe(50);
  });
});

describe('the trigger table', () => {
  it('is what the function files register, and every queue a trigger reads is a registered queue', async () => {
    const { allTriggers } = await import('../../shared/triggers/table');
    const { queueFunctions, timerFunctions } = await import('../../shared/triggers/registration');
    const { allQueues } = await import('../../shared/registry');
    await import('../../scripts/local/functions');
    const queueTriggers = allTriggers.filter((trigger) => trigger.kind === 'queue');
    const timerTriggers = allTriggers.filter((trigger) => trigger.kind === 'timer');
    expect(Object.fromEntries([...queueFunctions].map(([name, fn]) => [name, fn.queueName]))).toEqual(Object.fromEntries(queueTriggers.map((trigger) => [trigger.name, trigger.queue])));
    expect(Object.fromEntries([...timerFunctions].map(([name, fn]) => [name, fn.schedule]))).toEqual(Object.fromEntries(timerTriggers.map((trigger) => [trigger.name, trigger.schedule])));
    for (const trigger of queueTriggers) expect(allQueues).toContain(trigger.queue);
  });
});
