/** What a page not built yet shows: its purpose, and where the same can be done meanwhile. */
import { esc, notice, type Html } from '../kit';

export const notBuiltYet = (what: string): Html =>
  notice('info', `<p><strong>This page is coming.</strong> ${esc(what)}</p>`);
