// The console's entry: global styles, the language (chosen in the browser, see lib/language.ts),
// then the app shell into #app.
import { mount } from 'svelte';
import { loaders } from 'virtual:messages/console';
import { startLanguage } from '../../shared/i18n.svelte.ts';
import App from './App.svelte';
import { consoleLocale } from './lib/language';
import './app.css';

// startLanguage() reads <html lang>: the static page says "en", so the browser's choice goes there first.
document.documentElement.lang = consoleLocale();
await startLanguage(loaders);

const target = document.getElementById('app');
if (target !== null) mount(App, { target });
