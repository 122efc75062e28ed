/**
 * The console's reader of the live monitor's event stream (web/console/src/lib/event-stream.ts): the
 * text/event-stream format as it arrives in chunks of any size.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { EventStreamParser } from '../../web/console/src/lib/event-stream.ts';

describe('EventStreamParser', () => {
  it('reads events, their ids and the retry delay, and skips comments', () => {
    const parser = new EventStreamParser();
    const events = parser.push(
      'retry: 3000\n\nid: 5\nevent: snapshot\ndata: {"a":1}\n\n: heartbeat\n\nevent: counts\ndata: {"b":2}\n\n',
    );
    assert.equal(parser.retry, 3000);
    assert.deepEqual(events, [
      { event: 'snapshot', data: '{"a":1}', id: '5' },
      { event: 'counts', data: '{"b":2}', id: '5' },
    ]);
  });

  it('joins lines split across chunks, CRLF split between them included', () => {
    const parser = new EventStreamParser();
    const text = 'event: session\r\ndata: {"id":1,\r\ndata: "x":2}\r\n\r\nevent: removed\rdata: {"id":3}\r\r';
    const events = [...text].flatMap((char) => parser.push(char));
    // A CR at the end of what arrived may be half a CRLF: the next chunk settles it.
    events.push(...parser.push(': heartbeat\n'));
    assert.deepEqual(events, [
      { event: 'session', data: '{"id":1,\n"x":2}', id: undefined },
      { event: 'removed', data: '{"id":3}', id: undefined },
    ]);
  });

  it('names an event without an event field "message" and drops one without data', () => {
    const parser = new EventStreamParser();
    assert.deepEqual(parser.push('data:plain\n\nevent: empty\n\n'), [
      { event: 'message', data: 'plain', id: undefined },
    ]);
  });
});
