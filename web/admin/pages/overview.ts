import type { AdminPage } from '../kit';
import { notBuiltYet } from './placeholder';

export const overviewPage: AdminPage = {
  slug: '',
  label: 'Overview',
  intro: "Today's payments, your receipts by status and what your split holds.",
  render: async () => notBuiltYet(''),
};
