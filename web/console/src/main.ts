// The console's entry: global styles, then the app shell into #app.
import { mount } from 'svelte';
import App from './App.svelte';
import './app.css';

const target = document.getElementById('app');
if (target !== null) mount(App, { target });
