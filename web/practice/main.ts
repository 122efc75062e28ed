// The practice page's entry (/room/<token>/practice, and a demo exam's /practice/exam/<key>): the
// shared candidate styles, the page's own, then the page, in the language the server chose
// (<html lang>). It replaces the server's opening note (src/http/practice/practice.routes.ts).
import { mount } from 'svelte';
import { loaders } from 'virtual:messages/practice';
import '../shared/candidate-base.css';
import { startLanguage } from '../shared/i18n.svelte.ts';
import './practice.css';
import App from './App.svelte';

await startLanguage(loaders);
document.body.replaceChildren();
mount(App, { target: document.body });
