import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  escapeHtml,
  htmlToText,
  sanitizeInfoHtml,
  sanitizeInstructionsHtml,
  textToHtml,
} from '../../src/security/html.ts';

describe('HTML escaping and sanitising', () => {
  it('escapes the five significant characters and keeps line breaks of plain text', () => {
    assert.equal(escapeHtml(`<a href="x">'&'</a>`), '&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;');
    assert.equal(textToHtml('a < b\nc'), 'a &lt; b<br>\nc');
  });

  it('reduces individual information to its small allow-list', () => {
    assert.equal(
      sanitizeInfoHtml('<b onmouseover="x">bold</b><a href="mailto:a@example.org">m</a>'),
      '<b>bold</b><a href="mailto:a@example.org">m</a>',
    );
    assert.equal(sanitizeInfoHtml('<a href="//evil.example.org">x</a>'), '<a>x</a>');
    assert.equal(sanitizeInfoHtml('<img src="https://example.org/x.png">'), '');
  });

  it('keeps the formatting of instructions and drops everything that runs or navigates', () => {
    assert.equal(
      sanitizeInstructionsHtml(
        '<h2 style="color:red">Part 1</h2><script>alert(1)</script><p onclick="x()">Read <em>all</em></p>',
      ),
      '<h2>Part 1</h2><p>Read <em>all</em></p>',
    );
    assert.equal(
      sanitizeInstructionsHtml(
        '<table><tr><th scope="col">Q</th></tr><tr><td colspan="2">1</td></tr></table>',
      ),
      '<table><tr><th scope="col">Q</th></tr><tr><td colspan="2">1</td></tr></table>',
    );
    assert.equal(
      sanitizeInstructionsHtml(
        '<a href="javascript:alert(1)">x</a><iframe src="https://e.org"></iframe><form><input></form>',
      ),
      '<a target="_blank" rel="noopener noreferrer">x</a>',
    );
    assert.equal(
      sanitizeInstructionsHtml(
        '<a href="https://example.org/f.pdf">f</a><img src="x" onerror="alert(1)" alt="d">',
      ),
      '<a href="https://example.org/f.pdf" target="_blank" rel="noopener noreferrer">f</a><img src="x" alt="d" />',
    );
  });

  it('flattens HTML to readable text', () => {
    assert.equal(htmlToText('<p>a&nbsp;&lt;b&gt; &quot;c&quot;</p><p>d<br>e</p>'), 'a <b> "c"\nd\ne');
  });
});
