/**
 * The split in the browser: deploying it from the signed-in wallet (the factory's `createSplit`,
 * encoded here), following the transaction until it is mined, then asking the service to record it
 * (`POST /api/split/register`, which checks it on chain); and distributing a token now from the
 * wallet; sweeping deposit addresses into the split from the wallet. Each step is shown as it happens.
 */
import { createSplitCalldata, distributeCalldata } from '../eth';
import { api, busy, byId, clearErrors, messageOf, reloadWith, say, showError, status } from './kit';
import { connectSignedIn, waitForReceipt, walletMessage } from './wallet';

const body = document.body.dataset;
const chainId = () => Number(body.chainId);

type Step = 'wallet' | 'mined' | 'record';

const showStep = (list: HTMLElement, step: Step | 'done') => {
  const order: Step[] = ['wallet', 'mined', 'record'];
  const at = step === 'done' ? order.length : order.indexOf(step);
  list.hidden = false;
  for (const item of list.querySelectorAll<HTMLElement>('li[data-step]')) {
    const index = order.indexOf(item.dataset.step as Step);
    item.dataset.state = index < at ? 'done' : index === at ? 'active' : 'waiting';
    if (index === at) say(item.textContent ?? '');
  }
};

const deploy = async (box: HTMLElement, button: HTMLButtonElement) => {
  const steps = byId('deploy-steps')!;
  const error = byId('deploy-error')!;
  error.hidden = true;
  const done = busy(button, 'Deploying…');
  try {
    const payees = (box.dataset.payees ?? '').split(',').map((entry) => {
      const [address, bps] = entry.split(':');
      return { address: address!, bps: Number(bps) };
    });
    showStep(steps, 'wallet');
    const { provider, account } = await connectSignedIn(body.wallet ?? '', chainId());
    const hash = String(await provider.request({ method: 'eth_sendTransaction', params: [{ from: account, to: box.dataset.factory, data: createSplitCalldata(payees) }] }));
    showStep(steps, 'mined');
    status('deploy', `Transaction ${hash.slice(0, 10)}… sent; waiting for the network.`);
    await waitForReceipt(provider, hash);
    showStep(steps, 'record');
    const answer = await api<{ split: { address: string } }>('POST', box.dataset.register ?? '');
    if (!answer.ok) throw new Error(`The split is on chain, but recording it failed: ${answer.json.message}. Press the button again to retry.`);
    showStep(steps, 'done');
    reloadWith(`Your split is deployed at ${answer.json.split.address}.`);
  } catch (problem) {
    done();
    status('deploy', '');
    error.textContent = problem instanceof Error && !('code' in problem) ? problem.message : walletMessage(problem);
    error.hidden = false;
    say(error.textContent);
    button.focus();
  }
};

const distribute = async (table: HTMLElement, button: HTMLButtonElement) => {
  const token = button.dataset.distribute ?? '';
  const symbol = button.dataset.symbol ?? '';
  const done = busy(button, `Distributing ${symbol}…`);
  const error = byId('distribute-error');
  if (error) error.hidden = true;
  try {
    status('distribute', 'Confirm the transaction in your wallet…');
    const { provider, account } = await connectSignedIn(body.wallet ?? '', chainId());
    const hash = String(await provider.request({ method: 'eth_sendTransaction', params: [{ from: account, to: table.dataset.split, data: distributeCalldata(token) }] }));
    status('distribute', `Transaction ${hash.slice(0, 10)}… sent; waiting for the network.`);
    await waitForReceipt(provider, hash);
    reloadWith(`Distributed the split’s ${symbol}.`);
  } catch (problem) {
    done();
    status('distribute', '');
    if (error) {
      error.textContent = walletMessage(problem);
      error.hidden = false;
    }
    button.focus();
  }
};

interface SweepAnswer {
  to: string;
  data: string | null;
  deposits: Array<{ receiptId: string }>;
  remaining: number;
}

/**
 * Asks the service for the sweep call (all paid deposits, or `token` from every address), sends it
 * from the wallet, and reloads. The service's refusal shows as the other forms show theirs: next to
 * the field it names (the recovery's token), else in the form's message box.
 */
const sweep = async (box: HTMLElement, button: HTMLButtonElement, form: 'sweep' | 'recover', token?: string) => {
  const error = byId(`${form}-error`)!;
  const fields = form === 'recover' ? byId('recover-form') : null;
  if (fields) clearErrors(fields);
  error.hidden = true;
  const done = busy(button, form === 'sweep' ? 'Sweeping…' : 'Recovering…');
  try {
    // A recovery always names its token, an empty one included: the service answers which is wrong, never a sweep of something else.
    const answer = await api<SweepAnswer>('POST', box.dataset.sweep ?? '', form === 'recover' ? { token: token ?? '' } : {});
    if (!answer.ok) {
      done();
      status(form, '');
      if (fields) showError(fields, answer);
      else {
        error.textContent = messageOf(answer.json, answer.status);
        error.hidden = false;
        say(error.textContent);
      }
      if (!fields || error.hidden === false) button.focus();
      return;
    }
    if (!answer.json.data) {
      done();
      status(form, form === 'sweep' ? 'Nothing waits at your receipts’ addresses.' : 'None of your receipts’ addresses holds that token.');
      return;
    }
    status(form, 'Confirm the transaction in your wallet…');
    const { provider, account } = await connectSignedIn(body.wallet ?? '', chainId());
    const hash = String(await provider.request({ method: 'eth_sendTransaction', params: [{ from: account, to: answer.json.to, data: answer.json.data }] }));
    status(form, `Transaction ${hash.slice(0, 10)}… sent; waiting for the network.`);
    await waitForReceipt(provider, hash);
    const more = answer.json.remaining > 0 ? ` ${answer.json.remaining} more wait: sweep again.` : '';
    reloadWith(`Moved what ${answer.json.deposits.length} deposit address${answer.json.deposits.length === 1 ? '' : 'es'} held into your split.${more}`);
  } catch (problem) {
    done();
    status(form, '');
    error.textContent = walletMessage(problem);
    error.hidden = false;
    say(error.textContent);
    button.focus();
  }
};

export const enhanceSplit = () => {
  const deposits = byId('deposit-sweep');
  const sweepButton = byId<HTMLButtonElement>('sweep-button');
  if (deposits && sweepButton) sweepButton.addEventListener('click', () => void sweep(deposits, sweepButton, 'sweep'));
  const recover = byId<HTMLFormElement>('recover-form');
  const recoverButton = byId<HTMLButtonElement>('recover-button');
  if (deposits && recover && recoverButton) {
    recover.addEventListener('submit', (event) => {
      event.preventDefault();
      const token = (recover.elements.namedItem('token') as HTMLInputElement).value.trim();
      void sweep(deposits, recoverButton, 'recover', token);
    });
  }
  const box = byId('split-deploy');
  const button = byId<HTMLButtonElement>('deploy-button');
  if (box && button) button.addEventListener('click', () => void deploy(box, button));
  const table = byId('distribute');
  if (table) {
    for (const action of table.querySelectorAll<HTMLButtonElement>('button[data-distribute]')) action.addEventListener('click', () => void distribute(table, action));
  }
};
