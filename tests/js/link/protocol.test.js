// The extension's protocol twin against the vectors shared with protocol.py.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import * as protocol from "../../../src/tabpilot/extension/link/protocol.js";

const vectors = JSON.parse(readFileSync(new URL("../../vectors/protocol.json", import.meta.url), "utf8"));

test("constants match the Python twin", () => {
  assert.equal(protocol.PROTOCOL_VERSION, vectors.protocol_version);
  assert.equal(protocol.MIN_COMPATIBLE_PROTOCOL, vectors.min_compatible_protocol);
  assert.equal(protocol.DEFAULT_PORT, vectors.default_port);
  assert.deepEqual({ ...protocol.ERROR_EXIT_CODES }, vectors.error_exit_codes);
  assert.deepEqual([...protocol.REASONS].sort(), vectors.reasons);
  assert.deepEqual([...protocol.EXTENSION_METHODS].sort(), vectors.extension_methods);
  assert.deepEqual([...protocol.EXTENSION_EVENTS].sort(), vectors.extension_events);
  assert.deepEqual([...protocol.PANEL_METHODS].sort(), vectors.panel_methods);
  assert.deepEqual([...protocol.DAEMON_EVENTS].sort(), vectors.daemon_events);
  assert.deepEqual([...protocol.CHAT_EVENT_KINDS], vectors.chat_event_kinds);
  assert.equal(protocol.PANEL_SESSION_PREFIX, vectors.panel_session_prefix);
  assert.deepEqual([...protocol.WAIT_UNTIL], vectors.wait_until);
  assert.deepEqual([...protocol.PANEL_METHODS].sort(), vectors.panel_methods);
  assert.deepEqual([...protocol.DAEMON_EVENTS].sort(), vectors.daemon_events);
  assert.deepEqual([...protocol.CHAT_EVENT_KINDS], vectors.chat_event_kinds);
  assert.equal(protocol.PANEL_SESSION_PREFIX, vectors.panel_session_prefix);
});

test("protocol major parsing", () => {
  for (const [input, expected] of vectors.protocol_major) {
    assert.equal(protocol.parseProtocolMajor(input), expected, `major of ${JSON.stringify(input)}`);
  }
});

test("protocol version parsing", () => {
  for (const [input, expected] of vectors.protocol_version_parse) {
    assert.deepEqual(protocol.parseProtocolVersion(input), expected, `version ${JSON.stringify(input)}`);
  }
});

test("compatibility verdicts", () => {
  for (const [local, localFloor, remote, remoteFloor, verdict, why] of vectors.verdicts) {
    const [got, reason] = protocol.compatibilityVerdict(local, localFloor, remote, remoteFloor);
    assert.equal(got, verdict, `${local} vs ${remote}`);
    assert.ok(reason.includes(why), `${reason} should mention ${why}`);
  }
});

test("frame classification", () => {
  for (const [frame, expected] of vectors.classify) {
    assert.equal(protocol.classify(frame), expected, JSON.stringify(frame));
  }
});

test("RpcError refuses codes and reasons outside the closed sets", () => {
  assert.throws(() => new protocol.RpcError("nope", "x"));
  assert.throws(() => new protocol.RpcError("not_found", "x", "nope"));
  const err = new protocol.RpcError("not_found", "tab 9 not found", "unknown_tab", { tab_id: 9 });
  assert.deepEqual(err.toWire(), {
    code: "not_found",
    message: "tab 9 not found",
    data: { tab_id: 9, reason: "unknown_tab" },
  });
});

test("page strings in an error's words cross apart from tabpilot's own (vectors page_words)", () => {
  for (const { pieces, wire } of vectors.page_words) {
    const strings = [""];
    const values = [];
    for (const [who, text] of pieces) {
      if (who === "page") {
        values.push(protocol.fromPage(text));
        strings.push("");
      } else {
        strings[strings.length - 1] += text;
      }
    }
    const words = protocol.said(Object.assign(strings, { raw: strings }), ...values);
    assert.deepEqual(new protocol.RpcError(wire.code, words).toWire(), wire);
  }
});

test("a Said inside a Said keeps its page strings, and a hint's go along as hint_parts", () => {
  const name = protocol.said`${protocol.fromPage('option "A"')} @e1`;
  const err = new protocol.RpcError("invalid_params", protocol.said`${name} is off`, undefined, {
    hint: protocol.said`pick ${protocol.fromPage('"B"')}`,
  });
  assert.deepEqual(err.toWire().data, {
    message_parts: ["", 'option "A"', " @e1 is off"],
    hint: 'pick "B"',
    hint_parts: ["pick ", '"B"', ""],
  });
  assert.equal(err.message, 'option "A" @e1 is off');
});
