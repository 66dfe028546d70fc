/** Receipts: a placeholder until the page's own module replaces this file. */
import type { AdminPage } from '../kit';
import { notBuiltYet } from './placeholder';

export const receiptsPage: AdminPage = {
  slug: 'receipts',
  label: 'Receipts',
  intro: 'Every receipt with its live status, its events and webhook deliveries, and refunds.',
  render: async () => notBuiltYet('Until then, GET /api/receipts lists them with an API key.'),
};
