/** Webhooks: a placeholder until the page's own module replaces this file. */
import type { AdminPage } from '../kit';
import { notBuiltYet } from './placeholder';

export const webhooksPage: AdminPage = {
  slug: 'webhooks',
  label: 'Webhooks',
  intro: 'Where status changes are sent, test deliveries, and redelivery of logged events.',
  render: async () => notBuiltYet('Until then, set the default webhook URL under Settings and send a test with POST /api/webhooks/test.'),
};
