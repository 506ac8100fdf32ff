// A WebSocket stand-in the test opens, feeds and closes by hand.
export function fakeWebSocketClass() {
  const sockets = [];
  class FakeWebSocket {
    constructor(url) {
      this.url = url;
      this.sent = [];
      this.closed = null;
      sockets.push(this);
    }

    send(data) {
      this.sent.push(JSON.parse(data));
    }

    close(code, reason) {
      this.closed = { code, reason };
    }

    // test side
    open() {
      this.onopen?.({});
    }

    receive(data) {
      this.onmessage?.({ data: typeof data === "string" ? data : JSON.stringify(data) });
    }

    serverClose(code = 1006, reason = "") {
      this.closed = { code, reason };
      this.onclose?.({ code, reason });
    }
  }
  return { FakeWebSocket, sockets };
}
