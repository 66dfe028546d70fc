/** Terminal: a placeholder until the page's own module replaces this file. */
import type { AdminPage } from '../kit';
import { notBuiltYet } from './placeholder';

export const terminalPage: AdminPage = {
  slug: 'terminal',
  label: 'Terminal',
  intro: 'Take a payment at the counter: an amount becomes a QR code the buyer scans.',
  render: async () => notBuiltYet('Until then, POST /api/receipts/terminal answers the payment link and its QR code.'),
};
