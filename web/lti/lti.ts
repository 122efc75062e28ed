// The style sheet alone, for the LTI pages that run no script (a message, a link to a new window):
// the server links this entry's CSS and never its (empty) module.
import './lti.css';
