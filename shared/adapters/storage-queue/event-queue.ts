import type { EventQueue } from '../../ports/webhooks';
import type { QueueStore } from './client';

/** JSON in base64, the Functions queue trigger's default encoding (host.json messageEncoding). */
export const encodeQueueMessage = (message: unknown) => Buffer.from(JSON.stringify(message), 'utf8').toString('base64');

export const storageEventQueue = (store: QueueStore): EventQueue => ({
  send: async (queue, message, options = {}) => {
    await store.queue(queue).sendMessage(encodeQueueMessage(message), options.delaySeconds ? { visibilityTimeout: options.delaySeconds } : {});
  },
});
