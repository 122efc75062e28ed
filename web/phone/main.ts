/**
 * The phone page's entry (`phone`, served at /m/<pairing token>). The server's HTML names the exam
 * and says the page is opening, in the language it chose (<html lang>); this loads that language's
 * catalogue and replaces the server's words with the page itself.
 */
import '../shared/candidate-base.css';
import './phone.css';
import { mount } from 'svelte';
import { loaders } from 'virtual:messages/phone';
import { startLanguage } from '../shared/i18n.svelte.ts';
import { PhoneSession } from './lib/phone-session.svelte.ts';
import PhonePage from './PhonePage.svelte';

const token = decodeURIComponent(location.pathname.split('/').filter(Boolean).pop() ?? '');
const target = document.getElementById('app');
if (target !== null) {
  await startLanguage(loaders);
  const examName = document.getElementById('exam-name')?.textContent ?? '';
  target.replaceChildren();
  const session = new PhoneSession(token);
  mount(PhonePage, { target, props: { session, examName } });
  session.start();
}
