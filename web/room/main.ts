// The exam room's entry (/room/<token>): the shared candidate styles, the room's own, then the page.
// It replaces the server's opening note (src/http/room/page.routes.ts) and goes straight into
// <body>, where the live layout (body.live: header, main and the live panel in a grid) expects
// its parts.
import { mount } from 'svelte';
import '../shared/candidate-base.css';
import './room.css';
import App from './App.svelte';

document.body.replaceChildren();
mount(App, { target: document.body });
