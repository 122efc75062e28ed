// Posts the page's form as soon as it is read (LTI messages to the platform: start assessment,
// deep-linking response). Without script the page's Continue button does the same.
import './lti.css';

const form = document.querySelector('form[data-auto-submit]');
if (form instanceof HTMLFormElement) form.submit();
