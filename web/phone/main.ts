/**
 * The phone page's entry (`phone`, served at /m/<pairing token>). The server's HTML names the exam
 * and says the page is opening; this replaces it with the page itself.
 */
import '../shared/candidate-base.css';
import './phone.css';
import { mount } from 'svelte';
import { PhoneSession } from './lib/phone-session.svelte.ts';
import PhonePage from './PhonePage.svelte';

const token = decodeURIComponent(location.pathname.split('/').filter(Boolean).pop() ?? '');
const target = document.getElementById('app');
if (target !== null) {
  const examName = document.getElementById('exam-name')?.textContent ?? '';
  target.replaceChildren();
  const session = new PhoneSession(token);
  mount(PhonePage, { target, props: { session, examName } });
  session.start();
}
