import type { AdminPage } from '../kit';
import { notBuiltYet } from './placeholder';

export const splitPage: AdminPage = {
  slug: 'split',
  label: 'Split',
  intro: 'The contract every payment goes to, and how it divides each one between you and the platform.',
  render: async () => notBuiltYet(''),
};
