// The exam room's entry (/room/<token>): the shared candidate styles, the room's own, then the page,
// in the language the server chose (<html lang>). It replaces the server's opening note
// (src/http/room/page.routes.ts) and goes straight into <body>, where the live layout (body.live:
// header, main and the live panel in a grid) expects its parts.
import { mount } from 'svelte';
import { loaders } from 'virtual:messages/room';
import '../shared/candidate-base.css';
import { startLanguage } from '../shared/i18n.svelte.ts';
import './room.css';
import App from './App.svelte';

await startLanguage(loaders);
document.body.replaceChildren();
mount(App, { target: document.body });
