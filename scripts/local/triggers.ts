/**
 * The local host's queue and timer triggers, as the Functions host runs them: queue messages are
 * polled from Azurite (base64, host.json's batchSize and maxPollingInterval), deleted after a
 * successful run, made visible again after host.json's visibilityTimeout when a run throws, and
 * moved to `<queue>-poison` after maxDequeueCount tries. Timers run on their NCRONTAB schedule.
 */
import hostJson from '../../host.json';
import type { QueueStore } from '../../shared/adapters/storage-queue/client';
import { queueFunctions, timerFunctions } from '../../shared/triggers/registration';

/** `hh:mm:ss[.fff]` (host.json's TimeSpan) in milliseconds. */
export const timeSpanMs = (text: string): number => {
  const match = /^(\d+):(\d+):(\d+(?:\.\d+)?)$/.exec(text);
  if (!match) throw new Error(`not a TimeSpan: ${text}`);
  return Math.round(((Number(match[1]) * 60 + Number(match[2])) * 60 + Number(match[3])) * 1000);
};

// The schedules this host runs: every N seconds ("*/N * * * * *"). Anything else is refused at start.
export const scheduleIntervalMs = (schedule: string): number => {
  const match = /^\*\/(\d+) \* \* \* \* \*$/.exec(schedule.trim());
  if (!match || Number(match[1]) < 1) throw new Error(`the local host runs timers of the form */N * * * * * only, not "${schedule}"`);
  return Number(match[1]) * 1000;
};

const hostQueues = hostJson.extensions.queues;
export const queueSettings = {
  batchSize: hostQueues.batchSize,
  maxDequeueCount: hostQueues.maxDequeueCount,
  visibilityTimeoutMs: timeSpanMs(hostQueues.visibilityTimeout),
  pollMs: Math.min(timeSpanMs(hostQueues.maxPollingInterval), 500),
};

/**
 * Polling as the Functions host's queue trigger does it: at once after a full batch (a backlog), 100 ms
 * after a poll that found some messages, then 200 ms after an empty one, doubling on each further
 * empty poll up to maxPollingInterval.
 */
export const nextPollDelayMs = (previousMs: number | undefined, received: number, batchSize: number, maxMs: number): number => {
  if (received >= batchSize) return 0;
  if (received > 0) return Math.min(100, maxMs);
  return Math.min(previousMs === undefined || previousMs < 200 ? 200 : previousMs * 2, maxMs);
};

/** While a run is in progress its message stays invisible this long (the host renews it; runs here are short). */
const RUN_VISIBILITY_S = 600;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export interface Triggers {
  stop(): Promise<void>;
}

export const startTriggers = (queues: QueueStore, log: (line: string) => void = () => {}, settings = queueSettings): Triggers => {
  let stopped = false;
  const loops: Promise<void>[] = [];

  for (const [name, fn] of queueFunctions) {
    const queue = queues.queue(fn.queueName);
    const poison = queues.queue(`${fn.queueName}-poison`);
    const handle = async (item: { messageId: string; popReceipt: string; messageText: string; dequeueCount: number }) => {
      try {
        await fn.run(Buffer.from(item.messageText, 'base64').toString('utf8'), item.dequeueCount);
        await queue.deleteMessage(item.messageId, item.popReceipt);
      } catch (error) {
        log(`${name}: run ${item.dequeueCount} of message ${item.messageId} failed: ${error instanceof Error ? error.message : String(error)}`);
        if (item.dequeueCount >= settings.maxDequeueCount) {
          await poison.sendMessage(item.messageText);
          await queue.deleteMessage(item.messageId, item.popReceipt);
        } else {
          await queue.updateMessage(item.messageId, item.popReceipt, undefined, settings.visibilityTimeoutMs / 1000);
        }
      }
    };
    loops.push(
      (async () => {
        let delay: number | undefined;
        while (!stopped) {
          let received = 0;
          try {
            const { receivedMessageItems } = await queue.receiveMessages({ numberOfMessages: settings.batchSize, visibilityTimeout: RUN_VISIBILITY_S });
            received = receivedMessageItems.length;
            await Promise.all(receivedMessageItems.map((item) => handle(item).catch((error: unknown) => log(`${name}: ${String(error)}`))));
          } catch (error) {
            if (!stopped) log(`${name}: polling ${fn.queueName} failed: ${error instanceof Error ? error.message : String(error)}`);
          }
          delay = nextPollDelayMs(delay, received, settings.batchSize, settings.pollMs);
          if (!stopped && delay > 0) await sleep(delay);
        }
      })(),
    );
  }

  const timers = [...timerFunctions].map(([name, fn]) => {
    let running = false;
    return setInterval(() => {
      if (running || stopped) return;
      running = true;
      fn.run()
        .catch((error: unknown) => log(`${name}: ${error instanceof Error ? error.message : String(error)}`))
        .finally(() => (running = false));
    }, scheduleIntervalMs(fn.schedule));
  });

  return {
    stop: async () => {
      stopped = true;
      timers.forEach(clearInterval);
      await Promise.all(loops);
    },
  };
};
